/**
 * The whole fleet path on a daemon process: two simulated H100s that fake
 * NVML lists (two-gpu-h100.json: NVLinks to an NVSwitch, NUMA nodes 0 and 1,
 * MIG off on one and on the other), probed in parallel
 * (TOPOD_PROBE_CONCURRENCY=2), GET /v1/node with their agreement and link,
 * and the NFD feature file following a live MIG change.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseFeatureFile } from '../../../server/fleet/labels.js';
import type { NodeDocument } from '../../../server/model/node-schema.js';
import type { DaemonProcess } from '../../helpers/daemon-process.js';
import { startFakeNvmlDaemon, writeScenario } from '../../helpers/fake-nvml-daemon.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const FIXTURE = new URL('../../fixtures/nvml/two-gpu-h100.json', import.meta.url);
const tempDir = useTempDir('topod-fleet-');
let daemon: DaemonProcess | null = null;

afterEach(async () => {
  await daemon?.stop();
  daemon = null;
});

async function until<T>(what: string, read: () => Promise<T | null>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const readLabels = (file: string): Record<string, string> | null => {
  try {
    return parseFeatureFile(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
};

describe('fleet: two GPUs on one node', () => {
  it('probes both GPUs in parallel, serves /v1/node with their link, and keeps the NFD file in step with MIG', async () => {
    const dir = tempDir();
    const scenarioPath = path.join(dir, 'scenario.json');
    copyFileSync(FIXTURE, scenarioPath);
    const features = path.join(dir, 'features.d');
    daemon = await startFakeNvmlDaemon(dir, scenarioPath, 100, { TOPOD_PROBE_CONCURRENCY: '2', TOPOD_NFD_FEATURES_DIR: features });
    const base = daemon.baseUrl;
    const scenario = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
      devices: Array<{ uuid: string; migMode: { current: number; pending: number } }>;
    };
    const uuids = scenario.devices.map((d) => d.uuid);

    // Parallel: both probes start before either finishes.
    const started = await Promise.all(
      uuids.map((uuid) => daemon!.waitForLog((l) => l.msg === 'probe job started' && l.gpu === uuid, 60_000)),
    );
    expect(started).toHaveLength(2);
    const firstDone = daemon.logs.findIndex((l) => l.msg === 'probe job succeeded');
    const lastStart = Math.max(...started.map((line) => daemon!.logs.indexOf(line)));
    expect(firstDone < 0 || lastStart < firstDone).toBe(true);

    const node = await until('both GPUs measured', async () => {
      const doc = (await (await fetch(`${base}/v1/node`)).json()) as NodeDocument;
      return doc.gpus.length === 2 && doc.gpus.every((g) => g.measured) ? doc : null;
    });
    expect(node.gpus.map((g) => [g.uuid, g.index, g.numaNode, g.simulated])).toEqual([
      [uuids[0], 0, 0, true],
      [uuids[1], 1, 1, true],
    ]);
    // Each GPU's own document carries its own result.
    for (const gpu of node.gpus) {
      const topology = (await (await fetch(`${base}${gpu.topologyUrl}`)).json()) as { gpu: { uuid: string } };
      expect(topology.gpu.uuid).toBe(gpu.uuid);
    }
    expect(node.agreement.models).toHaveLength(1);
    expect(node.agreement.models[0]?.measuredGpus).toBe(2);
    expect(node.agreement.models[0]?.compared).toBeGreaterThan(5);
    expect(typeof node.agreement.agree).toBe('boolean');
    // Four NVLinks each, to an NVSwitch (5A:00.0 is no GPU): NV4 through the fabric; PCIe across NUMA nodes (SYS).
    expect(node.links).toEqual([
      {
        gpus: [uuids[0], uuids[1]],
        indices: [0, 1],
        topo: 'NV4',
        nvlink: { count: 4, via: 'switch' },
        pcie: { commonAncestor: 'system' },
        p2p: { read: 'ok', write: 'ok', nvlink: 'ok', atomics: 'ok' },
        degraded: [],
      },
    ]);
    expect(node.nvml.available).toBe(true);

    // NFD: GPU 0 has MIG off, GPU 1 on.
    const file = path.join(features, 'topod');
    const first = await until('the NFD file with both GPUs', async () => {
      const labels = readLabels(file);
      return labels?.['topod.io/gpus.measured'] === '2' ? labels : null;
    });
    expect(first['topod.io/mig.mode']).toBe('mixed');
    expect(first['topod.io/cluster-capable']).toBe('true');
    expect(first['topod.io/gpus.agree']).toBe(String(node.agreement.agree));

    // MIG enabled on GPU 0 too (as an admin's nvidia-smi -mig 1 would): the file follows.
    const changed = JSON.parse(readFileSync(FIXTURE, 'utf8')) as typeof scenario;
    changed.devices[0]!.migMode = { current: 1, pending: 1 };
    writeScenario(scenarioPath, changed);
    const second = await until(
      'the NFD file after the MIG change',
      async () => {
        const labels = readLabels(file);
        return labels?.['topod.io/mig.mode'] === 'enabled' ? labels : null;
      },
      20_000,
    );
    expect(Object.keys(second).filter((key) => second[key] !== first[key])).toEqual(['topod.io/mig.mode']);
    expect(daemon.logs.filter((l) => l.msg === 'NFD feature file written').length).toBeGreaterThanOrEqual(2);
  }, 180_000);
});
