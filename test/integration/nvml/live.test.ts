import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DynamicPoller } from '../../../server/dynamic/poller.js';
import type { NvmlSource } from '../../../server/dynamic/nvml-source.js';
import type { DynamicEvent } from '../../../server/dynamic/snapshot-diff.js';
import type { DynamicSnapshot } from '../../../server/dynamic/types.js';
import { assertNativeBuilt, fakeSource, ScenarioFile } from './fake-nvml.js';

let scenario: ScenarioFile | null = null;
const sources: NvmlSource[] = [];
let poller: DynamicPoller | null = null;

function source(): NvmlSource {
  const s = fakeSource();
  sources.push(s);
  return s;
}

beforeAll(assertNativeBuilt);
afterEach(async () => {
  poller?.stop();
  poller = null;
  for (const s of sources.splice(0)) await s.close();
  scenario?.remove();
  scenario = null;
});

describe('addon + fake NVML: live changes', () => {
  it('sees a scenario edit on the next read', async () => {
    scenario = new ScenarioFile('a100-40gb-mig-mixed.json');
    const nvml = source();
    expect((await nvml.read()).devices[0]?.mig.instances).toHaveLength(3);
    scenario.edit((s) => {
      s.devices[0].gpuInstances.pop();
    });
    expect((await nvml.read()).devices[0]?.mig.instances.map((i) => i.gpuInstanceId)).toEqual([2, 3]);
  });

  it('drives the poller: MIG enabled live produces mig.changed with the new instances', async () => {
    scenario = new ScenarioFile('h100-80gb-mig-off.json');
    const nvml = source();
    poller = new DynamicPoller({ source: nvml, pollMs: 10 });
    const initial = await nvml.read();
    const change = new Promise<{ snapshot: DynamicSnapshot; events: DynamicEvent[] }>((resolve) =>
      poller?.once('change', (snapshot, events) => resolve({ snapshot, events })),
    );
    poller.start(initial);
    const gpuUuid = initial.devices[0]?.uuid;
    scenario.edit((s) => {
      s.devices[0].migMode = { current: 1, pending: 1 };
      s.devices[0].gpuInstances = [
        {
          id: 1,
          profileId: 0,
          placement: { start: 0, size: 8 },
          computeInstances: [{ id: 0, multiprocessorCount: 132 }],
          migDeviceUuid: 'MIG-11111111-2222-5333-8444-555555555555',
        },
      ];
    });
    const { snapshot, events } = await change;
    expect(events).toEqual([{ type: 'mig.changed', gpuUuid, changes: ['mode 0→1', 'pending mode 0→1', 'instance 1 (profile 0) added'] }]);
    expect(snapshot.devices[0]?.mig.instances[0]?.migDeviceUuid).toBe('MIG-11111111-2222-5333-8444-555555555555');
    expect(poller.lastReadDurationMs).toBeGreaterThan(0);
  });

  it('keeps the event loop free while NVML is slow', async () => {
    scenario = new ScenarioFile('two-gpu-h100.json');
    scenario.edit((s) => {
      s.callDelayMicros = 2000;
    });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    const snapshot = await source().read();
    const elapsedMs = performance.now() - started;
    clearInterval(timer);
    expect(snapshot.devices).toHaveLength(2);
    // Hundreds of NVML calls at 2 ms each: the read is long, and the timer kept firing throughout.
    expect(elapsedMs).toBeGreaterThan(100);
    expect(ticks).toBeGreaterThan(elapsedMs / 5 / 4);
  });

  it('serves two sources reading at once', async () => {
    scenario = new ScenarioFile('two-gpu-h100.json');
    const [a, b] = await Promise.all([source().read(), source().read()]);
    expect(a.devices.map((d) => d.uuid)).toEqual(b.devices.map((d) => d.uuid));
    expect(a.available && b.available).toBe(true);
  });
});
