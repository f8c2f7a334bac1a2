/**
 * Interference seen in the measurements themselves (issue 17 item 2): a
 * family whose timed loads stalled past a time slice's length is measured
 * again; a tenant that stays shows in the second measurement too, and the
 * measurement says so (the job then drops it, test/integration/jobs/busy-gpu).
 */
import { describe, expect, it } from 'vitest';
import { measure } from '../../../server/discovery/index.js';
import { ProbeSession } from '../../../server/discovery/probe-session.js';
import type { ProbeChannel } from '../../../server/gpu/backend.js';
import { SimulatedBackend } from '../../../server/gpu/sim/index.js';

const FAMILY = { name: 'l1', ownsSeries: (name: string) => name.startsWith('l1.') };
const STALLED_CYCLES = 800_000;

/** A channel answering pchase with 100 loads of 30 cycles; the calls listed in `stalledCalls` (1-based) carry one stalled load. */
function channel(stalledCalls: readonly number[]): ProbeChannel & { calls: number } {
  const fake = {
    calls: 0,
    request: async () => {
      fake.calls += 1;
      const latenciesCycles = Array.from({ length: 100 }, () => 30);
      if (stalledCalls.includes(fake.calls)) latenciesCycles[42] = STALLED_CYCLES;
      return { latenciesCycles };
    },
    close: async () => undefined,
  };
  return fake as unknown as ProbeChannel & { calls: number };
}

async function measureFamilies(session: ProbeSession, families: number): Promise<string[]> {
  const warnings: string[] = [];
  for (let family = 0; family < families; family += 1) {
    await session.measureFamily(
      { ...FAMILY, name: `family${family}` },
      async () => {
        await session.request(`l1.sweep${family}`, 'pchase', { arrayBytes: 4096, strideBytes: 64, samples: 100 } as never);
      },
      (warning) => warnings.push(warning),
    );
  }
  return warnings;
}

describe('ProbeSession.measureFamily', () => {
  it('measures a family once when no load stalled', async () => {
    const probe = channel([]);
    const session = new ProbeSession(probe, undefined, undefined);
    expect(await measureFamilies(session, 2)).toEqual([]);
    expect(probe.calls).toBe(2);
    expect(session.raw).toHaveLength(2);
    expect(session.interference).toBeNull();
  });

  it('measures a family again after a stalled load, keeps only the second series, and names what it saw', async () => {
    const probe = channel([1]);
    const session = new ProbeSession(probe, undefined, undefined);
    const warnings = await measureFamilies(session, 1);
    expect(probe.calls).toBe(2);
    expect(session.raw).toHaveLength(1);
    expect((session.raw[0]!.result as { latenciesCycles: number[] }).latenciesCycles).not.toContain(STALLED_CYCLES);
    expect(session.interference).toBeNull();
    expect(warnings).toEqual([
      "family0: measured again: in its first measurement 1 of 100 timed loads took over 50000 cycles (another tenant's time slice); the second showed none",
    ]);
  });

  it('says the measurement is interfered when the family stalls again, and measures later families once', async () => {
    const probe = channel([1, 2, 3]);
    const session = new ProbeSession(probe, undefined, undefined);
    const warnings = await measureFamilies(session, 2);
    // Two measurements of the first family, one of the second.
    expect(probe.calls).toBe(3);
    expect(session.raw.map((series) => series.name)).toEqual(['l1.sweep0', 'l1.sweep1']);
    expect(session.interference).toBe(
      "family0: 1 of 100 timed loads took over 50000 cycles, and 1 of 100 when measured again: another tenant's time slices ran on the GPU",
    );
    expect(warnings).toEqual([`interference seen in the measurements: ${session.interference}`]);
  });
});

describe('measuring the simulated H100 with another tenant', () => {
  async function l1Measurement(intensity: number) {
    const backend = new SimulatedBackend({ models: ['h100-sxm5-80gb'], seed: 11, interference: intensity });
    const [gpu] = await backend.listDevices();
    const probe = await backend.open(gpu!);
    try {
      return await measure(probe, { only: ['l1'] });
    } finally {
      await probe.close();
    }
  }

  it('sees no interference on an idle GPU', async () => {
    const measured = await l1Measurement(0);
    expect(measured.interference).toBeUndefined();
    expect(measured.warnings.filter((warning) => /measured again|interference/.test(warning))).toEqual([]);
  }, 120_000);

  it('sees a tenant that stays in the series it stalled, twice', async () => {
    const measured = await l1Measurement(0.25);
    expect(measured.interference).toMatch(/^l1: \d+ of \d+ timed loads took over 50000 cycles, and \d+ of \d+ when measured again/);
    expect(measured.warnings).toContainEqual(expect.stringMatching(/^interference seen in the measurements: l1: /));
  }, 120_000);
});
