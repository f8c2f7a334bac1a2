import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { kernelBuild } from './kernel-build.js';
import { REPO_ROOT } from './raw-probe.js';
import { checkAllConsumed, checkConsumers, l2KernelsOf, PCHASE_KERNELS, report, SASS_LOAD_CLASSES, timedWindows } from './timed-loads.js';

// The SASS half of the timed-load proof (the PTX half is in compile.test.ts):
// what ptxas made of walk_timed, per architecture. Needs nvcc and cuobjdump or
// nvdisasm (the full CUDA toolkit; the GPU host has it at /usr/local/cuda).
// scripts/device/sass-check.sh runs the same check from the shell.

const exec = promisify(execFile);
function findTool(name: string): string | null {
  const onPath = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  const fallback = `/usr/local/cuda/bin/${name}`;
  return onPath || (existsSync(fallback) ? fallback : null);
}
const NVCC = findTool('nvcc');
const CUOBJDUMP = findTool('cuobjdump');
const NVDISASM = findTool('nvdisasm');
const DISASM = CUOBJDUMP ? { tool: CUOBJDUMP, args: ['-sass'] } : NVDISASM ? { tool: NVDISASM, args: [] } : null;
const skipReason = !NVCC
  ? 'nvcc not found'
  : !DISASM
    ? 'neither cuobjdump nor nvdisasm found on PATH or in /usr/local/cuda/bin (the full CUDA toolkit has them)'
    : null;

describe.skipIf(skipReason !== null)(`timed loads in SASS (${skipReason ? `skipped: ${skipReason}` : `${NVCC} + ${DISASM!.tool}`})`, () => {
  for (const arch of ['sm_90', 'sm_80'] as const) {
    it(`${arch}: every timed load's register is read before the stop clock; the self-test's unconsumed loads are not`, async () => {
      // ptxas's output for pchase.cu, from the one build of every kernel that compile.test.ts checks too.
      const cubin = (await kernelBuild(NVCC!)).cubin('pchase.cu', arch);
      const { stdout } = await exec(DISASM!.tool, [...DISASM!.args, cubin], { maxBuffer: 64 << 20 });
      const windows = timedWindows(stdout, 'sass');
      expect(
        checkConsumers(windows, { dialect: 'sass', ...PCHASE_KERNELS, expectedKinds: SASS_LOAD_CLASSES }),
        report(windows, 'sass'),
      ).toEqual([]);
    }, 300_000);
  }
});

describe('sass-check.sh', () => {
  it('is executable and runs the shared checker', () => {
    const script = path.join(REPO_ROOT, 'scripts/device/sass-check.sh');
    expect(spawnSync('bash', ['-n', script]).status).toBe(0);
    expect(readFileSync(script, 'utf8')).toContain('test/integration/probe/timed-loads-cli.ts sass');
  });
});

// Always runs: ptxas's own sm_90 output for pchase.cu as cuobjdump printed it on the H100 host
// (scripts/device/sass-check.sh, 2026-11-23). Texture fetches there name two destinations
// (TLD.LZ RZ, R3, R3, …): reading the first as the loaded register failed every texture window.
describe('timed loads in recorded H100 SASS (test/fixtures/h100/pchase-sm_90.sass.gz)', () => {
  it('every timed load of every flavour is consumed before the stop clock; only the self-test leaves some unconsumed', async () => {
    const { gunzipSync } = await import('node:zlib');
    const text = gunzipSync(readFileSync(path.join(REPO_ROOT, 'test/fixtures/h100/pchase-sm_90.sass.gz'))).toString('utf8');
    const windows = timedWindows(text, 'sass');
    expect(
      checkConsumers(windows, { dialect: 'sass', ...PCHASE_KERNELS, expectedKinds: SASS_LOAD_CLASSES }),
      report(windows, 'sass'),
    ).toEqual([]);
  });
});

// Always runs: l2-farnear.cu's sm_90 SASS as cuobjdump printed it on the H100 host, before and after the fix
// (2026-11-23). Before it, the timed LDG was issued ahead of the start clock (every latency read 4 cycles on the
// GPU) although the PTX order was right: only the machine code shows it, and the check must.
describe('the L2-structure check on recorded H100 SASS (test/fixtures/h100/l2-farnear*-sm_90.sass.gz)', () => {
  const sass = async (name: string) => {
    const { gunzipSync } = await import('node:zlib');
    return timedWindows(gunzipSync(readFileSync(path.join(REPO_ROOT, 'test/fixtures/h100', name))).toString('utf8'), 'sass');
  };
  it('passes the fixed kernel: its timed load feeds the stop clock', async () => {
    expect(checkAllConsumed(await sass('l2-farnear-sm_90.sass.gz'), 'sass', l2KernelsOf('l2-farnear'))).toEqual([]);
  });
  it('fails the kernel the GPU caught: no load between its clock reads', async () => {
    expect(checkAllConsumed(await sass('l2-farnear-before-fix-sm_90.sass.gz'), 'sass', l2KernelsOf('l2-farnear'))).toEqual([
      'no timed load found in a kernel matching /farnear_kernel/',
    ]);
  });
});
