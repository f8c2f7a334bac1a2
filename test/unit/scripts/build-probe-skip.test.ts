/**
 * `npm ci` must succeed on a machine without a GPU toolchain: the probe build
 * skips with a clear message, and TOPOD_REQUIRE_PROBE=1 turns that into a failure.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const cmake = spawnSync('sh', ['-c', 'command -v cmake'], { encoding: 'utf8' }).stdout.trim();
// A PATH that has cmake but neither nvcc nor hipcc, and toolkit homes that do not exist.
const bin = mkdtempSync(path.join(tmpdir(), 'topod-nocc-'));
if (cmake) symlinkSync(cmake, path.join(bin, 'cmake'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

function buildProbe(extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['scripts/build-probe.mjs'], {
    encoding: 'utf8',
    env: { PATH: bin, CUDA_HOME: '/nonexistent/cuda', ROCM_PATH: '/nonexistent/rocm', ...extra },
  });
}

describe('probe build without nvcc or hipcc', () => {
  it('skips with a message naming what is missing, and exits 0', () => {
    const result = buildProbe();
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      cmake ? /topod-probe skipped: neither nvcc \(CUDA\) nor hipcc \(ROCm\) found/ : /topod-probe skipped: cmake not found/,
    );
  });

  it('fails when the probe is required', () => {
    const result = buildProbe({ TOPOD_REQUIRE_PROBE: '1' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/topod-probe not built: .* \(TOPOD_REQUIRE_PROBE=1\)/);
  });
});
