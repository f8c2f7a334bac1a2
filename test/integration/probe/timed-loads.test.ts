import { describe, expect, it } from 'vitest';
import {
  checkAllConsumed,
  checkConsumers,
  isConsumed,
  l2KernelsOf,
  loadKind,
  PCHASE_KERNELS,
  PTX_LOAD_KINDS,
  SASS_LOAD_CLASSES,
  sassLoadClass,
  timedWindows,
  type ConsumerCheck,
} from './timed-loads.js';

// Synthetic compiler output shaped like nvcc 13's for native/probe/src/pchase.cu:
// the checks must hold on it without nvcc or cuobjdump.

const PTX_LOADS: Record<string, (dst: string) => string> = {
  'ld.global.ca': (d) => `ld.global.ca.u32 ${d}, [%rd46];`,
  'ld.global.cg': (d) => `ld.global.cg.u32 ${d}, [%rd46];`,
  'ld.global.nc': (d) => `ld.global.nc.u32 ${d}, [%rd46];`,
  'ld.const': (d) => `ld.const.u32 \t${d}, [%rd74];`,
  'ld.shared': (d) => `ld.shared.u32 ${d}, [%r152];`,
  'tex.1d': (d) => `tex.1d.v4.u32.s32 \t{${d}, %r320, %r321, %r322}, [%rd5, {${d}}];`,
  'ld.global': (d) => `ld.global.u32 ${d}, [%rd46];`,
};

let label = 0;
/** One timed loop as nvcc writes walk_timed: consumed (store before the stop clock), unconsumed (after it), or broken (no store at all). */
function ptxLoop(kind: string, stop: 'consumed' | 'unconsumed' | 'none'): string {
  const l = `$L__BB0_${++label}`;
  return `
${l}:
\t.pragma "nounroll";
\t// begin inline asm
\tmov.u32 %r186, %clock;
\t// end inline asm
\tmul.wide.u32 \t%rd47, %r233, 4;
\tadd.s64 \t%rd46, %rd4, %rd47;
\t// begin inline asm
\t${PTX_LOADS[kind]!('%r233')}
\t// end inline asm
${stop === 'consumed' ? '\tst.volatile.shared.u32 \t[%r17], %r233;\n' : ''}\t// begin inline asm
\tmov.u32 %r188, %clock;
\t// end inline asm
\tsub.s32 \t%r189, %r188, %r186;
${stop === 'unconsumed' ? '\tst.volatile.shared.u32 \t[%r17], %r233;\n' : ''}\tst.shared.u32 \t[%r251], %r189;
\tadd.s32 \t%r251, %r251, 4;
\tsetp.lt.u32 \t%p46, %r252, %r114;
\t@%p46 bra \t$L__BB0_${label};
`;
}

function ptxKernel(name: string, body: string): string {
  return `.visible .entry _ZN5topod5probe41_GLOBAL__N__741569f2_9_pchase_cu_17c12dbe${name}ENS1_11ChaseLaunchE(
\t.param .align 8 .b8 _param_0[72]
)
.maxntid 1024, 1, 1
{
\t.reg .pred \t%p<200>;
\t.reg .b32 \t%r<800>;
\t.reg .b64 \t%rd<200>;
\tld.param.u64 \t%rd1, [_param_0];
${body}
\tret;
}
`;
}

const kinds = Object.keys(PTX_LOADS);
const goodPtx = (overrides: { chase?: (k: string) => string; selfTest?: (k: string) => string } = {}) =>
  [
    ptxKernel('12chase_kernel', kinds.map(overrides.chase ?? ((k) => ptxLoop(k, 'consumed'))).join('')),
    ptxKernel(
      '24consumer_selftest_kernel',
      kinds.map(overrides.selfTest ?? ((k) => ptxLoop(k, 'consumed') + ptxLoop(k, 'unconsumed'))).join(''),
    ),
    ptxKernel('11pair_kernel', kinds.map((k) => ptxLoop(k, 'consumed')).join('')),
  ].join('\n');

const PTX_CHECK: ConsumerCheck = { dialect: 'ptx', ...PCHASE_KERNELS, expectedKinds: PTX_LOAD_KINDS };

describe('timed loads in PTX', () => {
  it('finds one window per timed loop, its load and the volatile shared store that consumes it', () => {
    const windows = timedWindows(ptxKernel('12chase_kernel', ptxLoop('ld.global.ca', 'consumed')), 'ptx');
    expect(windows).toHaveLength(1);
    expect(windows[0]!.kernel).toMatch(/chase_kernel/);
    expect(windows[0]!.load.opcode).toBe('ld.global.ca.u32');
    expect(windows[0]!.load.writes).toEqual(['%r233']);
    expect(windows[0]!.consumers.map((c) => c.opcode)).toEqual(['st.volatile.shared.u32']);
    expect(isConsumed(windows[0]!, 'ptx')).toBe(true);
  });

  it('sees no consumer when the value is stored after the stop clock', () => {
    const [w] = timedWindows(ptxKernel('24consumer_selftest_kernel', ptxLoop('ld.const', 'unconsumed')), 'ptx');
    expect(w!.consumers).toEqual([]);
    expect(isConsumed(w!, 'ptx')).toBe(false);
  });

  it('names each flavour without its value type, texture by its first vector register', () => {
    const windows = timedWindows(ptxKernel('12chase_kernel', kinds.map((k) => ptxLoop(k, 'consumed')).join('')), 'ptx');
    expect(windows.map((w) => loadKind(w.load, 'ptx'))).toEqual(kinds);
    expect(windows.every((w) => isConsumed(w, 'ptx'))).toBe(true);
  });

  it('follows the value through a move, and forgets a register overwritten from elsewhere', () => {
    const moved = ptxLoop('ld.shared', 'none').replace(
      '\tmov.u32 %r188, %clock;',
      '\tmov.b32 %r300, %r233;\n\tst.volatile.shared.u32 [%r17], %r300;\n\tmov.u32 %r188, %clock;',
    );
    expect(isConsumed(timedWindows(ptxKernel('12chase_kernel', moved), 'ptx')[0]!, 'ptx')).toBe(true);
    const overwritten = ptxLoop('ld.shared', 'none').replace(
      '\tmov.u32 %r188, %clock;',
      '\tmov.b32 %r233, %r5;\n\tst.volatile.shared.u32 [%r17], %r233;\n\tmov.u32 %r188, %clock;',
    );
    expect(isConsumed(timedWindows(ptxKernel('12chase_kernel', overwritten), 'ptx')[0]!, 'ptx')).toBe(false);
  });

  it('counts only a volatile shared store as the PTX consumer', () => {
    const added = ptxLoop('ld.global.cg', 'none').replace(
      '\tmov.u32 %r188, %clock;',
      '\tadd.s32 %r301, %r233, 1;\n\tmov.u32 %r188, %clock;',
    );
    const [w] = timedWindows(ptxKernel('12chase_kernel', added), 'ptx');
    expect(w!.consumers).toHaveLength(1);
    expect(isConsumed(w!, 'ptx')).toBe(false);
  });

  it('does not pair clock reads across a label or a branch', () => {
    const split = ptxLoop('ld.global.ca', 'consumed').replace('\tst.volatile.shared.u32', '$L__BB0_999:\n\tst.volatile.shared.u32');
    expect(timedWindows(ptxKernel('12chase_kernel', split), 'ptx')).toEqual([]);
  });

  it('takes the last load of a window as the timed one', () => {
    const twoLoads = ptxLoop('ld.global.ca', 'unconsumed').replace('\tmul.wide.u32', '\tld.global.u64 %rd4, [%rd1];\n\tmul.wide.u32');
    const [w] = timedWindows(ptxKernel('24consumer_selftest_kernel', twoLoads), 'ptx');
    expect(w!.load.opcode).toBe('ld.global.ca.u32');
    expect(isConsumed(w!, 'ptx')).toBe(false);
  });

  it('passes the pchase.cu shape and fails it when a consumer is dropped or the self-test loses its contrast', () => {
    expect(checkConsumers(timedWindows(goodPtx(), 'ptx'), PTX_CHECK)).toEqual([]);
    const dropped = checkConsumers(
      timedWindows(goodPtx({ chase: (k) => ptxLoop(k, k === 'ld.const' ? 'none' : 'consumed') }), 'ptx'),
      PTX_CHECK,
    );
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatch(/stop clock does not wait for ld\.const\.u32 .*chase_kernel/);
    const noContrast = checkConsumers(
      timedWindows(goodPtx({ selfTest: (k) => ptxLoop(k, 'consumed') + ptxLoop(k, 'consumed') }), 'ptx'),
      PTX_CHECK,
    );
    expect(noContrast).toHaveLength(kinds.length);
    expect(noContrast[0]).toMatch(/self-test kernel: no unconsumed timed ld\.global\.ca load/);
    const missing = checkConsumers(
      timedWindows(goodPtx({ chase: (k) => (k === 'tex.1d' ? '' : ptxLoop(k, 'consumed')) }), 'ptx'),
      PTX_CHECK,
    );
    expect(missing).toEqual([expect.stringMatching(/no timed tex\.1d load in a kernel matching \/chase_kernel\//)]);
    expect(checkConsumers([], PTX_CHECK)).toEqual([
      'no timed load found in a kernel matching /chase_kernel/',
      'no timed load found in a kernel matching /pair_kernel/',
      'no timed load found in the self-test kernel (/consumer_selftest_kernel/)',
    ]);
  });
});

// ---- SASS ---------------------------------------------------------------------------

const SASS_LOADS: Record<string, string> = {
  LDG: 'LDG.E.STRONG.SM R5, desc[UR4][R2.64]',
  LDC: 'LDC R5, c[0x3][R4]',
  LDS: 'LDS R5, [R4]',
  TEX: 'TLD.SCR.LZ RZ, R5, R4, 0x0, 0x58, 1D, 0x1',
};

let address = 0x100;
const at = () => {
  address += 0x10;
  return `/*${address.toString(16).padStart(4, '0')}*/`;
};
const ins = (text: string) =>
  `        ${at()}                   ${text} ;                       /* 0x000fe20000000800 */\n                                                                                 /* 0x000fe20000000800 */`;

/** walk_timed as ptxas might lay it out: clock, address, load, [consumer], clock, latency store, branch back. */
function sassLoop(kind: string, stop: 'consumed' | 'unconsumed' | 'none', consumer = 'STS [R9], R5'): string {
  const l = `.L_x_${++label}`;
  return [
    `${l}:`,
    ins('CS2R.32 R6, SR_CLOCKLO'),
    ins('IMAD.WIDE.U32 R2, R5, 0x4, R10'),
    ins('LDC.64 R10, c[0x0][0x210]'),
    ins(SASS_LOADS[kind]!),
    ...(stop === 'consumed' ? [ins(consumer)] : []),
    ins('CS2R.32 R7, SR_CLOCKLO'),
    ...(stop === 'unconsumed' ? [ins('STS [R9], R5')] : []),
    ins('IADD3 R7, -R6, R7, RZ'),
    ins('STS [R12], R7'),
    ins('ISETP.GE.U32.AND P0, PT, R13, R14, PT'),
    ins(`@!P0 BRA \`(${l})`),
  ].join('\n');
}

function sassKernel(name: string, body: string): string {
  return `\t\tFunction : _ZN5topod5probe41_GLOBAL__N__741569f2_9_pchase_cu_17c12dbe${name}ENS1_11ChaseLaunchE
\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
${ins('LDC R1, c[0x0][0x28]')}
${ins('S2R R0, SR_TID.X')}
${body}
${ins('EXIT')}
.L_x_end${++label}:
${ins('BRA `(.L_x_end' + label + ')')}
`;
}

const sassKinds = Object.keys(SASS_LOADS);
const goodSass = (chase: (k: string) => string = (k) => sassLoop(k, 'consumed')) =>
  '\n\tcode for sm_90\n' +
  [
    sassKernel('12chase_kernel', sassKinds.map(chase).join('\n')),
    sassKernel('24consumer_selftest_kernel', sassKinds.map((k) => sassLoop(k, 'consumed') + '\n' + sassLoop(k, 'unconsumed')).join('\n')),
    sassKernel('11pair_kernel', sassKinds.map((k) => sassLoop(k, 'consumed')).join('\n')),
  ].join('\n');

const SASS_CHECK: ConsumerCheck = { dialect: 'sass', ...PCHASE_KERNELS, expectedKinds: SASS_LOAD_CLASSES };

describe('the L2-structure kernels’ check', () => {
  it('passes consumed loads, and fails a kernel whose load left its window (issued before the start clock) or lost its consumer', () => {
    const farnear = (shape: 'consumed' | 'unconsumed') => ptxKernel('14farnear_kernel', ptxLoop('ld.global.cg', shape));
    const patterns = l2KernelsOf('l2-farnear-sm_90.ptx');
    expect(patterns).toEqual([/farnear_kernel/]);
    expect(checkAllConsumed(timedWindows(farnear('consumed'), 'ptx'), 'ptx', patterns)).toEqual([]);
    expect(checkAllConsumed(timedWindows(farnear('unconsumed'), 'ptx'), 'ptx', patterns)).toEqual([
      expect.stringMatching(/^stop clock does not wait for ld\.global\.cg/),
    ]);
    // no window at all: the load was hoisted above the start clock
    expect(checkAllConsumed(timedWindows(ptxKernel('14farnear_kernel', ''), 'ptx'), 'ptx', patterns)).toEqual([
      'no timed load found in a kernel matching /farnear_kernel/',
    ]);
    expect(l2KernelsOf('other.sass')).toHaveLength(3);
  });
});

describe('timed loads in SASS', () => {
  it('finds the load between the CS2R clock reads and the STS that reads its register', () => {
    const windows = timedWindows(sassKernel('12chase_kernel', sassLoop('LDG', 'consumed')), 'sass');
    expect(windows).toHaveLength(1);
    expect(windows[0]!.load.opcode).toBe('LDG.E.STRONG.SM');
    expect(windows[0]!.load.writes).toEqual(['R5']);
    expect(windows[0]!.consumers.map((c) => c.text)).toEqual(['STS [R9], R5']);
    expect(isConsumed(windows[0]!, 'sass')).toBe(true);
  });

  it('reads register pairs and uniform registers, not RZ or special registers', () => {
    const [w] = timedWindows(sassKernel('12chase_kernel', sassLoop('LDG', 'consumed', 'IMAD.WIDE.U32 R2, R5.reuse, 0x4, UR6')), 'sass');
    expect(w!.consumers[0]!.reads).toEqual(['R5', 'UR6']);
    expect(w!.consumers[0]!.writes).toEqual(['R2']);
    const [st] = timedWindows(sassKernel('12chase_kernel', sassLoop('LDG', 'consumed', 'STG.E desc[UR4][R20.64], R5')), 'sass');
    expect(st!.consumers[0]!.reads).toEqual(['UR4', 'R20', 'R21', 'R5']);
  });

  it('sees no consumer when the register is read only after the stop clock; accepts S2R as a clock read', () => {
    const [w] = timedWindows(sassKernel('24consumer_selftest_kernel', sassLoop('LDC', 'unconsumed')), 'sass');
    expect(w!.load.text).toBe('LDC R5, c[0x3][R4]');
    expect(isConsumed(w!, 'sass')).toBe(false);
    const s2r = sassLoop('LDS', 'consumed').replaceAll('CS2R.32 R', 'S2R R');
    expect(isConsumed(timedWindows(sassKernel('12chase_kernel', s2r), 'sass')[0]!, 'sass')).toBe(true);
  });

  it('does not pair clock reads across a branch (a rotated loop fails the check instead of passing it)', () => {
    const rotated = sassLoop('LDG', 'consumed').replace(/^.*STS \[R9\], R5.*$/m, (line) => `${ins('@P1 BRA `(.L_x_9)')}\n${line}`);
    expect(timedWindows(sassKernel('12chase_kernel', rotated), 'sass')).toEqual([]);
  });

  it('does not take a kernel-parameter reload (LDC from bank 0) for the timed load', () => {
    const reload = sassLoop('LDG', 'unconsumed').replace(
      /^(.*CS2R\.32 R7, SR_CLOCKLO.*)$/m,
      (line) => `${ins('LDC.64 R12, c[0x0][0x218]')}\n${line}`,
    );
    const [w] = timedWindows(sassKernel('24consumer_selftest_kernel', reload), 'sass');
    expect(w!.load.opcode).toBe('LDG.E.STRONG.SM');
    expect(isConsumed(w!, 'sass')).toBe(false);
  });

  it('classes texture fetches together', () => {
    expect(['TLD.SCR.LZ', 'TEX.SCR.B.LL', 'LDG.E.CONSTANT', 'LDS.U'].map(sassLoadClass)).toEqual(['TEX', 'TEX', 'LDG', 'LDS']);
  });

  it('passes the pchase.cu shape and fails it when a consumer is dropped', () => {
    expect(checkConsumers(timedWindows(goodSass(), 'sass'), SASS_CHECK)).toEqual([]);
    const dropped = checkConsumers(
      timedWindows(
        goodSass((k) => sassLoop(k, k === 'TEX' ? 'none' : 'consumed')),
        'sass',
      ),
      SASS_CHECK,
    );
    expect(dropped).toEqual([expect.stringMatching(/stop clock does not wait for TLD\.SCR\.LZ RZ, R5.*chase_kernel/)]);
  });

  it('reads nvdisasm output (functions as .text sections) the same way', () => {
    const nvdisasm = sassKernel('12chase_kernel', sassLoop('LDS', 'consumed')).replace(/\t\tFunction : (\S+)/, '\t.text.$1:');
    const [w] = timedWindows(nvdisasm, 'sass');
    expect(w!.kernel).toMatch(/chase_kernel/);
    expect(isConsumed(w!, 'sass')).toBe(true);
  });
});
