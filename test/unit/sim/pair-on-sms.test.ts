import { describe, expect, it } from 'vitest';
import type { PchasePairResult } from '../../../server/protocol/ops.js';
import { GPU_MODELS } from '../../../server/gpu/sim/index.js';
import { openSimulated } from '../../helpers/sim-channel.js';

const H100 = GPU_MODELS['h100-sxm5-80gb']!;
const chaser = { space: 'global.cg' as const, arrayBytes: 4096, strideBytes: 64 };

describe('pchase.pair on chosen SMs (simulated H100)', () => {
  it('runs first and second on the SMs asked for, and on SMs 0 and 1 without smIds', async () => {
    const channel = await open();
    const chosen = (await channel.request('pchase.pair', {
      first: chaser,
      second: chaser,
      placement: 'different-sm',
      smIds: [6, 0],
      samples: 16,
    })) as PchasePairResult;
    expect([chosen.firstSmId, chosen.secondSmId]).toEqual([6, 0]);
    expect(chosen.firstLatenciesCycles).toHaveLength(16);
    const plain = (await channel.request('pchase.pair', {
      first: chaser,
      second: chaser,
      placement: 'different-sm',
      samples: 16,
    })) as PchasePairResult;
    expect([plain.firstSmId, plain.secondSmId]).toEqual([0, 1]);
  });

  it('refuses SM ids the device lacks and smIds with same-sm placement', async () => {
    const channel = await open();
    const n = H100.device.multiprocessorCount;
    await expect(
      channel.request('pchase.pair', { first: chaser, second: chaser, placement: 'different-sm', smIds: [0, n], samples: 16 }),
    ).rejects.toMatchObject({ code: 'bad_request' });
    await expect(
      channel.request('pchase.pair', { first: chaser, second: { ...chaser, warp: 1 }, placement: 'same-sm', smIds: [0, 6], samples: 16 }),
    ).rejects.toMatchObject({ code: 'bad_request' });
  });
});

function open() {
  return openSimulated(H100, 1);
}
