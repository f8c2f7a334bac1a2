import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_POLL_MS, DynamicPoller } from '../../../server/dynamic/poller.js';
import type { GpuActivityReading } from '../../../server/dynamic/activity-types.js';
import type { DynamicEvent } from '../../../server/dynamic/snapshot-diff.js';
import { UNAVAILABLE_SNAPSHOT, type DynamicSnapshot, type DynamicSource } from '../../../server/dynamic/types.js';
import { deviceState, firstDevice, snapshotOf } from './scenario-device.js';

const a100 = firstDevice('a100-40gb-mig-mixed.json');
const h100 = firstDevice('h100-80gb-mig-mixed.json');

/** A source that serves whatever `next` holds, optionally slowly, and counts overlapping reads. */
class ScriptedSource implements DynamicSource {
  next: DynamicSnapshot = snapshotOf([deviceState(a100)]);
  delayMs = 0;
  reads = 0;
  concurrent = 0;
  maxConcurrent = 0;
  closed = false;

  async read(): Promise<DynamicSnapshot> {
    this.reads += 1;
    this.concurrent += 1;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.concurrent);
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      return structuredClone(this.next);
    } finally {
      this.concurrent -= 1;
    }
  }

  async readActivity(): Promise<GpuActivityReading> {
    return { activity: null, reason: 'not scripted' };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

const pollers: DynamicPoller[] = [];
function poller(source: DynamicSource, pollMs: number): DynamicPoller {
  const p = new DynamicPoller({ source, pollMs });
  pollers.push(p);
  return p;
}

function nextChange(p: DynamicPoller): Promise<{ snapshot: DynamicSnapshot; events: DynamicEvent[] }> {
  return new Promise((resolve) => p.once('change', (snapshot, events) => resolve({ snapshot, events })));
}

afterEach(() => {
  for (const p of pollers.splice(0)) p.stop();
  vi.unstubAllEnvs();
});

describe('DynamicPoller', () => {
  it('reports the GPUs of the first read when started without a baseline', async () => {
    const p = poller(new ScriptedSource(), 5);
    const change = nextChange(p);
    p.start();
    const { events } = await change;
    expect(events).toEqual([{ type: 'gpu.added', gpuUuid: a100.uuid, index: 0, name: a100.name }]);
    expect(p.current?.devices[0]?.uuid).toBe(a100.uuid);
  });

  it('emits a change with the new snapshot when the MIG layout changes', async () => {
    const source = new ScriptedSource();
    const p = poller(source, 5);
    p.start(await source.read());
    const changed = deviceState(a100);
    changed.mig.instances = changed.mig.instances.slice(1);
    source.next = snapshotOf([changed]);
    const { snapshot, events } = await nextChange(p);
    expect(events).toEqual([{ type: 'mig.changed', gpuUuid: a100.uuid, changes: ['instance 2 (profile 9) removed'] }]);
    expect(snapshot.devices[0]?.mig.instances).toHaveLength(2);
  });

  it('never overlaps reads, even when a read outlasts the period', async () => {
    const source = new ScriptedSource();
    source.delayMs = 30;
    const p = poller(source, 1);
    p.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    p.stop();
    expect(source.reads).toBeGreaterThan(2);
    expect(source.maxConcurrent).toBe(1);
  });

  it('joins a read in flight instead of starting another', async () => {
    const source = new ScriptedSource();
    source.delayMs = 20;
    const p = poller(source, 1000);
    const [a, b] = await Promise.all([p.poll(), p.poll()]);
    expect(source.reads).toBe(1);
    expect(a).toBe(b);
  });

  it('stops reading after stop() and reports nothing from a late read', async () => {
    const source = new ScriptedSource();
    const p = poller(source, 5);
    const listener = vi.fn();
    p.on('change', listener);
    p.start(await source.read());
    source.next = snapshotOf([deviceState(h100)]);
    p.stop();
    const readsAtStop = source.reads;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(source.reads).toBe(readsAtStop);
    expect(listener).not.toHaveBeenCalled();
    expect(await p.poll()).toEqual([]);
  });

  it('keeps polling when a listener throws', async () => {
    const source = new ScriptedSource();
    const p = poller(source, 5);
    p.on('change', () => {
      throw new Error('listener bug');
    });
    p.start(snapshotOf([]));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(p.getStats().reads).toBeGreaterThan(1);
    expect(p.getStats().changes).toBe(1);
  });

  it('exposes the duration of the last read', async () => {
    const source = new ScriptedSource();
    source.delayMs = 15;
    const p = poller(source, 1000);
    expect(p.lastReadDurationMs).toBeNull();
    await p.poll();
    expect(p.lastReadDurationMs).toBeGreaterThanOrEqual(10);
    expect(p.getStats()).toMatchObject({ reads: 1, changes: 1 });
  });

  it('takes the period it is given (config reads TOPOD_POLL_MS, not the poller), else the default, and rejects nonsense', () => {
    vi.stubEnv('TOPOD_POLL_MS', '250');
    expect(new DynamicPoller({ source: new ScriptedSource() }).pollMs).toBe(DEFAULT_POLL_MS);
    expect(new DynamicPoller({ source: new ScriptedSource(), pollMs: 250 }).pollMs).toBe(250);
    expect(() => new DynamicPoller({ source: new ScriptedSource(), pollMs: 0 })).toThrow(RangeError);
  });

  it('backs off exponentially while NVML is unavailable and returns to the period once it answers', async () => {
    const source = new ScriptedSource();
    source.next = UNAVAILABLE_SNAPSHOT('libnvidia-ml.so.1: cannot open shared object file');
    const p = new DynamicPoller({ source, pollMs: 10, maxBackoffMs: 35 });
    pollers.push(p);
    expect(p.nextDelayMs()).toBe(10);
    await p.poll();
    expect(p.nextDelayMs()).toBe(20);
    await p.poll();
    expect(p.nextDelayMs()).toBe(35);
    await p.poll();
    expect(p.nextDelayMs()).toBe(35);
    source.next = snapshotOf([deviceState(a100)]);
    await p.poll();
    expect(p.nextDelayMs()).toBe(10);
  });
});
