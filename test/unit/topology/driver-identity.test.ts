import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseKernelModuleVersion, readKernelModuleVersion, resolveDriverIdentity } from '../../../server/topology/driver-identity.js';
import { useTempDir } from '../../helpers/temp-dir.js';

describe('driver identity', () => {
  it('prefers NVML, then the kernel module, then a remembered release, then the runtime', () => {
    const lastKnown = { version: '580.95.05', source: 'nvml' as const };
    expect(resolveDriverIdentity({ nvml: '580.95.05', kernelModule: '580.95.05', lastKnown, runtime: 'cuda-13000' })).toEqual({
      version: '580.95.05',
      source: 'nvml',
    });
    expect(resolveDriverIdentity({ kernelModule: '580.95.05', lastKnown, runtime: 'cuda-13000' })).toEqual({
      version: '580.95.05',
      source: 'kernel-module',
    });
    // NVML down, no /proc: the release NVML gave last time, not the runtime's differently spelled version.
    expect(resolveDriverIdentity({ lastKnown, runtime: 'cuda-13000' })).toEqual({ version: '580.95.05', source: 'last-known' });
    // A remembered runtime version is no better than the runtime's answer now.
    expect(resolveDriverIdentity({ lastKnown: { version: 'cuda-12080', source: 'runtime' }, runtime: 'cuda-13000' })).toEqual({
      version: 'cuda-13000',
      source: 'runtime',
    });
    expect(resolveDriverIdentity({ lastKnown: { version: 'cuda-12080', source: 'runtime' } })).toEqual({
      version: 'cuda-12080',
      source: 'last-known',
    });
    expect(resolveDriverIdentity({})).toBeNull();
  });

  it('reads the release from /proc/driver/nvidia/version for both kernel module flavours', () => {
    expect(
      parseKernelModuleVersion(
        'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 09:21:34 UTC 2025\nGCC version:  gcc 12\n',
      ),
    ).toBe('580.95.05');
    expect(
      parseKernelModuleVersion('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build  (dvs-builder@U16)\n'),
    ).toBe('570.124.06');
    expect(parseKernelModuleVersion('something else\n')).toBeNull();
  });

  const tempDir = useTempDir();
  it('reads a version file, and says null when there is none', () => {
    const file = path.join(tempDir(), 'version');
    writeFileSync(file, 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.12  Wed\n');
    expect(readKernelModuleVersion(file)).toBe('535.104.12');
    expect(readKernelModuleVersion(path.join(tempDir(), 'missing'))).toBeNull();
  });
});
