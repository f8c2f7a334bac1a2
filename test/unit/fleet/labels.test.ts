/**
 * NFD labels from real documents: a simulated H100's full discovery merged
 * with fake-NVML MIG scenarios (MIG off, MIG on with mixed instances), read
 * through the same TopologyApi the daemon's writer reads.
 */
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeAgreement } from '../../../server/fleet/agreement.js';
import { readGpuFacts, type GpuFacts } from '../../../server/fleet/gpu-documents.js';
import {
  LABEL_PREFIX,
  assertValidLabels,
  featureFileText,
  labelKeyErrors,
  labelValueErrors,
  nodeLabels,
  parseFeatureFile,
  profileLabelPart,
} from '../../../server/fleet/labels.js';
import { FEATURE_FILE_NAME, NfdFeatureWriter } from '../../../server/fleet/nfd-writer.js';
import type { ResultDocument } from '../../../server/model/document.js';
import { DocumentTopology, mergedGpu, simulatedH100Result } from '../../helpers/face-documents.js';
import { silentLogger } from '../../helpers/fakes.js';
import { useTempDir } from '../../helpers/temp-dir.js';

let h100: ResultDocument;
beforeAll(async () => {
  h100 = await simulatedH100Result();
}, 120_000);

const tempDir = useTempDir('topod-nfd-');

function labelsFor(scenario: string | null): Record<string, string> {
  return nodeLabels(readGpuFacts(new DocumentTopology([mergedGpu(h100, scenario)])));
}

describe('Kubernetes label rules (apimachinery IsQualifiedName / IsValidLabelValue)', () => {
  it('accepts what the API server accepts', () => {
    for (const key of ['topod.io/l2.bytes', 'topod.io/mig-1g.10gb-me.l2-bytes', 'plain', 'a/b', `x.io/${'a'.repeat(63)}`])
      expect(labelKeyErrors(key), key).toEqual([]);
    for (const value of ['', 'true', '52428800', 'enabled', 'a_b.c-d', 'a'.repeat(63)]) expect(labelValueErrors(value), value).toEqual([]);
  });

  it('refuses what the API server refuses', () => {
    for (const key of [
      'topod.io/mig-1g.10gb+me.l2-bytes',
      'topod.io/',
      '/x',
      'Topod.IO/x',
      'topod.io/-x',
      'topod.io/x.',
      `x.io/${'a'.repeat(64)}`,
      'a/b/c',
    ]) {
      expect(labelKeyErrors(key), key).not.toEqual([]);
    }
    for (const value of ['-1', 'a b', 'x+y', '.5', 'a'.repeat(64), '3.35TB/s']) expect(labelValueErrors(value), value).not.toEqual([]);
    expect(() => assertValidLabels({ 'topod.io/x': 'a b' })).toThrow(/invalid node labels/);
  });

  it('turns MIG profile names into valid name parts', () => {
    expect(profileLabelPart('1g.10gb+me')).toBe('1g.10gb-me');
    expect(profileLabelPart('7g.80gb')).toBe('7g.80gb');
    expect(labelKeyErrors(`${LABEL_PREFIX}mig-${profileLabelPart('1g.10gb+me')}.l2-bytes`)).toEqual([]);
  });
});

describe('node labels of a simulated H100 with fake-NVML MIG scenarios', () => {
  it('carries the measured L1, L2, segment, cluster capability and every MIG profile’s L2 share, all valid', () => {
    const labels = labelsFor('h100-80gb-mig-mixed.json');
    assertValidLabels(labels);
    expect(Object.keys(labels).every((key) => key.startsWith(LABEL_PREFIX))).toBe(true);
    const elements = h100.elements as Record<string, Record<string, { value: number }> | undefined>;
    expect(labels['topod.io/l1.bytes-per-sm']).toBe(String(elements['l1']?.['size']?.value));
    expect(labels['topod.io/l2.bytes']).toBe(String(elements['l2']?.['size']?.value));
    expect(Number(labels['topod.io/l2.segment-bytes'])).toBeGreaterThan(0);
    expect(Number(labels['topod.io/l2.segment-bytes'])).toBeLessThanOrEqual(Number(labels['topod.io/l2.bytes']));
    expect(labels['topod.io/cluster-capable']).toBe('true');
    expect(labels['topod.io/simulated']).toBe('true');
    expect(labels['topod.io/gpus.measured']).toBe('1');
    expect(labels['topod.io/mig.mode']).toBe('enabled');
    // One label per profile; a 7g instance gets the whole L2, a 1g one its 1/8 (8 memory slices).
    const l2 = Number(labels['topod.io/l2.bytes']);
    expect(Number(labels['topod.io/mig-7g.80gb.l2-bytes'])).toBe(l2);
    expect(Number(labels['topod.io/mig-1g.10gb.l2-bytes'])).toBe(Math.floor(l2 / 8));
    expect(labels['topod.io/mig-1g.10gb-me.l2-bytes']).toBeDefined();
    // A single GPU has nothing to agree with: the label is left out, not guessed.
    expect(labels['topod.io/gpus.agree']).toBeUndefined();
  });

  it('changes when the MIG scenario changes, and only in what changed', () => {
    const off = labelsFor('h100-80gb-mig-off.json');
    const on = labelsFor('h100-80gb-mig-mixed.json');
    expect(off['topod.io/mig.mode']).toBe('disabled');
    expect(on['topod.io/mig.mode']).toBe('enabled');
    const changed = Object.keys({ ...off, ...on }).filter((key) => off[key] !== on[key]);
    expect(changed).toEqual(['topod.io/mig.mode']);
  });

  it('leaves MIG labels out without NVML, and keeps the measured ones', () => {
    const labels = labelsFor(null);
    expect(Object.keys(labels).some((key) => key.includes('mig'))).toBe(false);
    expect(labels['topod.io/l2.bytes']).toBeDefined();
  });

  it('takes the smallest value of several GPUs and says whether same-model GPUs agree', () => {
    const [a] = readGpuFacts(new DocumentTopology([mergedGpu(h100, 'h100-80gb-mig-off.json')])) as [GpuFacts];
    const scaled = (by: number): GpuFacts => ({
      ...a,
      uuid: `GPU-scaled-${by}`,
      index: 1,
      measured: a.measured && {
        ...a.measured,
        elements: {
          ...a.measured.elements,
          l2: { ...a.measured.elements['l2'], size: { value: (a.measured.elements['l2']?.['size']?.value ?? 0) * by, unit: 'bytes' } },
        },
      },
    });
    const close = nodeLabels([a, scaled(1.01)]);
    expect(close['topod.io/gpus.agree']).toBe('true');
    expect(close['topod.io/l2.bytes']).toBe(String(a.measured?.elements['l2']?.['size']?.value));
    const far = [a, scaled(0.9)];
    expect(nodeLabels(far)['topod.io/gpus.agree']).toBe('false');
    expect(nodeLabels(far)['topod.io/l2.bytes']).toBe(String(Math.floor((a.measured?.elements['l2']?.['size']?.value ?? 0) * 0.9)));
    const differences = nodeAgreement(far).models[0]?.differences ?? [];
    expect(differences.map((d) => `${d.element}.${d.attribute}`)).toEqual(['l2.size']);
  });

  it('writes a features.d file NFD parses back to the same labels', () => {
    const labels = labelsFor('h100-80gb-mig-mixed.json');
    const text = featureFileText(labels, 'topod test');
    expect(text.startsWith('# topod test\n')).toBe(true);
    expect(parseFeatureFile(text)).toEqual(labels);
  });
});

describe('NfdFeatureWriter', () => {
  it('writes atomically, rewrites only on change, and follows MIG changes', async () => {
    const dir = path.join(tempDir(), 'features.d');
    const topology = new DocumentTopology([mergedGpu(h100, 'h100-80gb-mig-off.json')]);
    const writer = new NfdFeatureWriter({ dir, topology, logger: silentLogger, header: 'topod test', debounceMs: 10 });
    writer.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const file = path.join(dir, FEATURE_FILE_NAME);
    expect(parseFeatureFile(readFileSync(file, 'utf8'))['topod.io/mig.mode']).toBe('disabled');
    expect(writer.writes).toBe(1);
    const firstWrite = statSync(file).mtimeMs;

    // Nothing changed: no rewrite, same inode contents and time.
    expect(writer.refresh()).toBe(false);
    expect(statSync(file).mtimeMs).toBe(firstWrite);

    // The MIG layout changes (what the poller would merge in): one rewrite, no temporary file left behind.
    topology.add(mergedGpu(h100, 'h100-80gb-mig-mixed.json'));
    for (const listener of topology.listeners) listener({ type: 'mig.changed', gpuUuid: h100.gpu.uuid, at: new Date().toISOString() });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(parseFeatureFile(readFileSync(file, 'utf8'))['topod.io/mig.mode']).toBe('enabled');
    expect(writer.writes).toBe(2);
    expect(readdirSync(dir)).toEqual([FEATURE_FILE_NAME]);
    writer.close();

    // A new writer (a daemon restart) finds the file already right and leaves it alone.
    const again = new NfdFeatureWriter({ dir, topology, logger: silentLogger, header: 'topod test', debounceMs: 10 });
    again.start();
    expect(again.writes).toBe(0);
    // …but replaces a file someone edited.
    writeFileSync(file, 'topod.io/l2.bytes=1\n');
    const edited = new NfdFeatureWriter({ dir, topology, logger: silentLogger, header: 'topod test', debounceMs: 10 });
    edited.start();
    expect(edited.writes).toBe(1);
    expect(parseFeatureFile(readFileSync(file, 'utf8'))['topod.io/mig.mode']).toBe('enabled');
    again.close();
    edited.close();
  });

  it('reports a folder it cannot write to without throwing, and writes once it can', () => {
    const base = tempDir();
    const blocker = path.join(base, 'not-a-dir');
    writeFileSync(blocker, '');
    const topology = new DocumentTopology([mergedGpu(h100, 'h100-80gb-mig-off.json')]);
    const writer = new NfdFeatureWriter({ dir: path.join(blocker, 'features.d'), topology, logger: silentLogger, header: 'topod test' });
    expect(() => writer.start()).not.toThrow();
    expect(writer.writes).toBe(0);
    rmSync(blocker);
    expect(writer.refresh()).toBe(true);
    expect(parseFeatureFile(readFileSync(path.join(blocker, 'features.d', FEATURE_FILE_NAME), 'utf8'))['topod.io/mig.mode']).toBe(
      'disabled',
    );
    writer.close();
  });
});
