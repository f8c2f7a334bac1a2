import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { kernelBuild } from './kernel-build.js';
import { REPO_ROOT } from './raw-probe.js';
import { accessReport, checkTrafficAccesses, trafficAccesses } from './traffic-accesses.js';

// The traffic kernels keep every access (issue 20): PTX from the shared build wherever nvcc is,
// SASS where a disassembler is too (scripts/device/sass-check.sh runs the same check on the GPU host).

const exec = promisify(execFile);
function findTool(name: string): string | null {
  const onPath = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  const fallback = `/usr/local/cuda/bin/${name}`;
  return onPath || (existsSync(fallback) ? fallback : null);
}
const NVCC = findTool('nvcc');
const DISASM = findTool('cuobjdump')
  ? { tool: findTool('cuobjdump')!, args: ['-sass'] }
  : findTool('nvdisasm')
    ? { tool: findTool('nvdisasm')!, args: [] }
    : null;

describe('the traffic access check', () => {
  const sass = (kernel: string, body: string[]) =>
    [
      `\t\tFunction : ${kernel}`,
      ...body.map((b, i) => `        /*${(i * 16).toString(16).padStart(4, '0')}*/                   ${b} ;`),
    ].join('\n');
  const all = (drop: string | null) =>
    ['Ij', 'I5uint2', 'I5uint4']
      .flatMap((t, i) => {
        const w = ['', '.64', '.128'][i];
        const k = (name: string) => `_ZN5topod5probe${name.length}${name}${t}EEvPT_mm`;
        return [
          sass(k('read_kernel'), [`LDG.E${w} R4, desc[UR4][R2.64]`, 'STG.E desc[UR4][R6.64], R0']),
          sass(k('write_kernel'), [`STG.E${w} desc[UR4][R2.64], R4`]),
          sass(
            k('rmw_kernel'),
            drop === 'rmw' && i === 2
              ? [`STG.E${w} desc[UR4][R2.64], R4`]
              : [`LDG.E${w} R4, desc[UR4][R2.64]`, `STG.E${w} desc[UR4][R2.64], R4`],
          ),
          sass(k('vecmul_kernel'), [`LDG.E${w} R4, desc[UR4][R2.64]`, `LDG.E${w} R8, desc[UR4][R6.64]`, `STG.E${w} desc[UR4][R10.64], R4`]),
        ];
      })
      .join('\n');

  it('passes kernels that keep their accesses, and names one that lost its load', () => {
    expect(checkTrafficAccesses(trafficAccesses(all(null), 'sass'))).toEqual([]);
    const problems = checkTrafficAccesses(trafficAccesses(all('rmw'), 'sass'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/rmw_kernel.*0 global load\(s\) of 16 B, needs 1/);
  });

  it('reads PTX widths: v4.u32 is 16 bytes, v2.u32 8', () => {
    const ptx = [
      '.visible .entry _Z12read_kernelI5uint4EvPKT_mm(',
      '\tld.global.v4.u32 \t{%r1, %r2, %r3, %r4}, [%rd5];',
      '.visible .entry _Z12write_kernelI5uint2EvPT_mm(',
      '\tst.global.v2.u32 \t[%rd2], {%r1, %r2};',
    ].join('\n');
    const kernels = trafficAccesses(ptx, 'ptx');
    expect(kernels.map((k) => [k.pattern, k.elementBytes, k.loads, k.stores])).toEqual([
      ['read', 16, [16], []],
      ['write', 8, [], [8]],
    ]);
  });
});

describe.skipIf(NVCC === null)('the traffic kernels as compiled', () => {
  it('keep every load and store at its element width (PTX, sm_80 and sm_90)', async () => {
    const build = await kernelBuild(NVCC!);
    for (const arch of ['sm_80', 'sm_90'] as const) {
      const kernels = trafficAccesses(readFileSync(build.ptx('traffic.cu', arch), 'utf8'), 'ptx');
      expect(checkTrafficAccesses(kernels), accessReport(kernels)).toEqual([]);
    }
  }, 600_000);

  it.skipIf(DISASM === null)(
    'keep every load and store in the machine code (SASS, sm_90)',
    async () => {
      const cubin = (await kernelBuild(NVCC!)).cubin('traffic.cu', 'sm_90');
      const { stdout } = await exec(DISASM!.tool, [...DISASM!.args, cubin], { maxBuffer: 64 << 20 });
      const kernels = trafficAccesses(stdout, 'sass');
      expect(checkTrafficAccesses(kernels), accessReport(kernels)).toEqual([]);
    },
    600_000,
  );

  it('sass-check.sh runs the same check on the GPU host', () => {
    expect(readFileSync(path.join(REPO_ROOT, 'scripts/device/sass-check.sh'), 'utf8')).toContain(
      'test/integration/probe/traffic-accesses-cli.ts sass',
    );
  });
});
