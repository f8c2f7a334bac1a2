/**
 * The hwloc face (server/faces/hwloc-xml.ts) read back by the real hwloc:
 * `lstopo -i <file> -v` must show topod's attributes on the GPU's object.
 * - matching: test/fixtures/faces/hwloc-host-h100.xml is a host's lstopo XML
 *   with an H100 at the recorded run's PCI bus id, listed by hwloc's NVML
 *   backend ("nvml0") and by DRM ("card1"): the attributes go on nvml0;
 * - added: this machine's own `lstopo --of xml` (no GPU here) gets a PCI
 *   device and an OS device for the GPU, beside the NUMA node NVML names;
 * - a PCI device hwloc listed without a GPU OS device gets one.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../../server/faces/documents.js';
import { hwlocGpuInfo, type HwlocGpu } from '../../../server/faces/hwloc-gpu-info.js';
import { runLstopo } from '../../../server/faces/hwloc-lstopo.js';
import { HwlocXmlError, hwlocXmlWithGpus, normalisePciBusId } from '../../../server/faces/hwloc-xml.js';
import { mergedGpu, recordedH100Result, simulatedH100Result } from '../../helpers/face-documents.js';
import { useTempDir } from '../../helpers/temp-dir.js';

const FIXTURE = 'test/fixtures/faces/hwloc-host-h100.xml';
const tempDir = useTempDir('topod-hwloc-');
const HAVE_LSTOPO = (() => {
  try {
    execFileSync('lstopo-no-graphics', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function h100(overrides: Partial<HwlocGpu> = {}): HwlocGpu {
  const { merged } = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
  return {
    uuid: merged.gpu.uuid,
    index: 0,
    name: merged.gpu.name,
    vendor: 'nvidia',
    pciBusId: merged.gpu.pciBusId,
    numaNode: 0,
    probeStatus: 'probed',
    simulated: false,
    document: merged,
    ...overrides,
  };
}

/** What the real lstopo prints, verbose, for an XML document. */
function lstopoVerbose(xml: string): string {
  const file = path.join(tempDir(), 'node.xml');
  writeFileSync(file, xml);
  return execFileSync('lstopo-no-graphics', ['-i', file, '-v', '--of', 'console'], { encoding: 'utf8' });
}

const lineOf = (output: string, pattern: RegExp) => output.split('\n').find((line) => pattern.test(line)) ?? '';

describe('PCI bus ids', () => {
  it.each([
    ['00000000:3B:00.0', '0000:3b:00.0'],
    ['0000:3b:00.0', '0000:3b:00.0'],
    ['3b:00.0', '0000:3b:00.0'],
    ['00000001:00:06.1', '0001:00:06.1'],
  ])('%s → %s', (input, expected) => expect(normalisePciBusId(input)).toBe(expected));

  it('refuses what is no bus id', () => {
    expect(normalisePciBusId('GPU-1234')).toBeNull();
    expect(normalisePciBusId('00:06.9')).toBeNull();
  });
});

describe('hwloc info attributes', () => {
  it('name each measured value with its unit, read from the document', () => {
    const gpu = h100();
    const info = new Map(hwlocGpuInfo(gpu));
    const l2 = gpu.document!.elements.l2!;
    expect(info.get('TopodGPUUUID')).toBe(gpu.uuid);
    expect(info.get('TopodL2SizeBytes')).toBe(String(l2.size!.value));
    expect(Number(info.get('TopodL1LatencyCycles'))).toBeCloseTo(gpu.document!.elements.l1!.latency!.mean, 3);
    if (l2.amount?.per === 'gpu') expect(info.get('TopodL2Segments')).toBe(String(l2.amount.value));
    for (const instance of gpu.document!.mig!.instances) {
      expect(info.get(`TopodMIGInstance.GI${instance.gpuInstanceId}.L2ShareBytes`)).toBe(String(instance.l2.bytes));
      expect(info.get(`TopodMIGInstance.GI${instance.gpuInstanceId}.L2ShareBasis`)).toMatch(/^derived from (NVML placements|memory size)$/);
    }
  });

  it('carry every element a simulated discovery measures: bandwidths, partitions, line sizes', async () => {
    const { merged } = mergedGpu(await simulatedH100Result(), 'h100-80gb-mig-mixed.json');
    const info = new Map(hwlocGpuInfo(h100({ document: merged, simulated: true })));
    const memory = merged.elements.deviceMemory!;
    expect(info.get('TopodSimulated')).toBe('1');
    expect(info.get('TopodDeviceMemoryReadBandwidthBytesPerSecond')).toBe(String(memory.readBandwidth!.value));
    expect(info.get('TopodL2LineSizeBytes')).toBe(String(merged.elements.l2!.lineSize!.value));
    const partitions = merged.elements.l2!.partitions;
    if (partitions) expect(info.get('TopodL2Partitions')).toBe(String(partitions.count));
    const bounded = Object.entries(merged.elements).find(([, element]) => element?.size?.bound === 'lower');
    if (bounded) expect(info.get(`Topod${bounded[0].charAt(0).toUpperCase()}${bounded[0].slice(1)}SizeBound`)).toBe('lower');
  });

  it('say when the GPU is not measured yet', () => {
    const info = new Map(hwlocGpuInfo(h100({ document: null, probeStatus: 'running' })));
    expect(info.get('TopodMeasurements')).toBe('none yet (probe running): identity only');
    expect(info.has('TopodL2SizeBytes')).toBe(false);
  });
});

describe.skipIf(!HAVE_LSTOPO)('hwloc XML read back by lstopo', () => {
  it('puts the attributes on the GPU hwloc listed (its NVML OS device), matched by PCI bus id', () => {
    const gpu = h100();
    const xml = hwlocXmlWithGpus(readFileSync(FIXTURE, 'utf8'), [gpu]);
    const output = lstopoVerbose(xml);
    const nvml = lineOf(output, /"nvml0"$/);
    const l2 = gpu.document!.elements.l2!;
    expect(nvml).toContain(`TopodGPUUUID=${gpu.uuid}`);
    expect(nvml).toContain(`TopodL2SizeBytes=${l2.size!.value}`);
    expect(nvml).toContain('TopodL1LatencyCycles=');
    expect(nvml).toMatch(/TopodL2Segments=\d+ /);
    expect(nvml).toMatch(/TopodMIGInstance\.GI\d+\.L2ShareBytes=\d+/);
    expect(nvml).not.toContain('TopodNote');
    // Nothing added: the DRM device keeps only what hwloc said, and no topod OS device appears.
    expect(lineOf(output, /"card1"$/)).not.toContain('Topod');
    expect(output).not.toContain('"topod0"');
    // hwloc's own document is kept: its machine, caches and other devices.
    expect(output).toContain('"eth0"');
    expect(formatBytes(l2.size!.value)).toMatch(/MiB$/);
  });

  it('adds the GPU hwloc did not list, beside its NUMA node, and says so', async () => {
    const host = await runLstopo({ PATH: process.env.PATH ?? '/usr/bin:/bin' });
    expect(host.kind).toBe('xml');
    const xml = hwlocXmlWithGpus(host.kind === 'xml' ? host.xml : '', [h100({ pciBusId: '00000000:C1:00.0' })]);
    const output = lstopoVerbose(xml);
    expect(lineOf(output, /busid=0000:c1:00\.0/)).toMatch(/id=10de:0000 class=0302\(3D\).*TopodNote="hwloc did not list this GPU/);
    const added = lineOf(output, /"topod0"$/);
    expect(added).toMatch(/^\s*GPU\(topod\) /);
    expect(added).toContain('TopodNote="hwloc did not list this GPU: topod added this PCI device and OS device"');
    expect(added).toMatch(/TopodL2SizeBytes=\d+/);
  });

  it('adds a GPU OS device under a PCI device hwloc listed without one', () => {
    const host = readFileSync(FIXTURE, 'utf8')
      .replace(/\s*<object type="OSDev" gp_index="22"[^>]*\/>/, '')
      .replace(/\s*<object type="OSDev" gp_index="23"[\s\S]*?<\/object>/, '');
    expect(host).not.toContain('nvml0');
    const output = lstopoVerbose(hwlocXmlWithGpus(host, [h100()]));
    const added = lineOf(output, /"topod0"$/);
    expect(added).toContain('TopodNote="hwloc listed the PCI device but no GPU OS device for it: topod added this OS device"');
    expect(added).toContain('GPUModel="NVIDIA H100 80GB HBM3"');
    expect(lineOf(output, /busid=0000:00:06\.0/)).not.toContain('TopodNote');
  });

  it('places GPUs by NUMA node when it adds them, several at once', () => {
    const host = readFileSync(FIXTURE, 'utf8');
    const xml = hwlocXmlWithGpus(host, [
      h100({ index: 1, uuid: 'GPU-second', pciBusId: '00000000:3B:00.0', document: null, probeStatus: 'queued' }),
      h100(),
    ]);
    const output = lstopoVerbose(xml);
    expect(lineOf(output, /"topod1"$/)).toContain('TopodGPUUUID=GPU-second');
    expect(lineOf(output, /"nvml0"$/)).toContain(`TopodIndex=0`);
  });
});

describe.skipIf(HAVE_LSTOPO)('hwloc XML read back by lstopo', () => {
  it('skipped: lstopo is not installed (apt-get install hwloc; .ci/run installs it)', () => {
    expect(HAVE_LSTOPO).toBe(false);
  });
});

describe('input that is not hwloc XML', () => {
  it.each(['', '<html><body/></html>', '<topology version="2.0"></topology>', '<topology><object'])(
    '%j is refused with the reason',
    (xml) => {
      expect(() => hwlocXmlWithGpus(xml, [h100()])).toThrow(HwlocXmlError);
    },
  );
});
