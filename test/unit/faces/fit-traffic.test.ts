/**
 * The fit advice's traffic part (server/faces/fit-traffic.ts): a simulated
 * H100's full discovery (device-memory bandwidths) with the traffic a real
 * H100's sweep measured (test/fixtures/h100/traffic-sweep.json.gz, counters,
 * analysed by the current analysis). The numbers are the predictor's and the
 * document's own; none is pinned.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTraffic } from '../../../server/discovery/strategies/traffic.js';
import { curveCorrections, parametersFromDocument, predictWithCurve } from '../../../server/discovery/traffic-predict.js';
import { fitAdvice } from '../../../server/faces/fit.js';
import { fitTraffic, type FitAccess } from '../../../server/faces/fit-traffic.js';
import type { GpuTopologyDocument, RawSeries, ResultDocument } from '../../../server/model/document.js';
import type { TrafficTopology } from '../../../server/model/traffic-schema.js';
import { documentErrors } from '../../helpers/document-validator.js';
import { mergedGpu, simulatedH100Result } from '../../helpers/face-documents.js';

const MIB = 1024 * 1024;
let result: ResultDocument;
let traffic: TrafficTopology;
let withTraffic: GpuTopologyDocument;
let withoutTraffic: GpuTopologyDocument;

beforeAll(async () => {
  const sweep = JSON.parse(
    gunzipSync(readFileSync(new URL('../../fixtures/h100/traffic-sweep.json.gz', import.meta.url))).toString('utf8'),
  ) as { raw: RawSeries[] };
  traffic = buildTraffic(sweep.raw).traffic!;
  result = await simulatedH100Result();
  withTraffic = mergedGpu({ ...result, traffic }, null).merged;
  withoutTraffic = mergedGpu(result, null).merged;
}, 120_000);

const access = (over: Partial<FitAccess> = {}): FitAccess => ({
  pattern: 'read',
  target: 'written',
  strideBytes: 128,
  elementBytes: 4,
  ...over,
});
const workingSetBytes = 800 * MIB;

describe('fit advice: traffic of a described access', () => {
  it('the document has both device-memory bandwidths, and the document with traffic is valid', () => {
    expect(withTraffic.elements.deviceMemory?.readBandwidth?.value).toBeGreaterThan(0);
    expect(withTraffic.elements.deviceMemory?.writeBandwidth?.value).toBeGreaterThan(0);
    expect(documentErrors('GpuTopologyDocument', withTraffic)).toEqual([]);
  });

  it('the amplification is the traffic predictor’s (model × measured curve) over the working set, with the numbers it used', () => {
    for (const a of [
      access(),
      access({ pattern: 'rmw', strideBytes: 256 }),
      access({ pattern: 'write', target: 'fresh', strideBytes: 8 }),
      access({ pattern: 'vecmul', strideBytes: 4 }),
    ]) {
      const t = fitTraffic(withTraffic, workingSetBytes, a);
      const parameters = parametersFromDocument(traffic)!;
      const expected = predictWithCurve(parameters, curveCorrections(parameters, traffic.curve), { ...a, footprintBytes: workingSetBytes });
      expect(t.measured).toBe(true);
      expect(t.method).toBe('counters');
      expect(t.access).toEqual({ ...a, footprintBytes: workingSetBytes });
      expect(t.dramBytesPerUsefulByte, a.pattern).toBeCloseTo(expected.bytesPerUsefulByte, 3);
      expect(t.dramReadBytes).toBe(Math.round(expected.readBytes));
      expect(t.dramWriteBytes).toBe(Math.round(expected.writeBytes));
      expect(t.used!.readFillBytes).toEqual({ value: traffic.readFillBytes!.value, source: 'microbenchmark', method: 'counters' });
      expect(t.used!.storesAllocate).toEqual({
        value: traffic.storesAllocate[a.target]!.value,
        source: 'microbenchmark',
        method: 'counters',
      });
      expect(t.used!.curveFactor.value).toBeCloseTo(expected.curveFactor, 3);
    }
  });

  it('a sparse read moves one fill per access: amplification fill / element, effective bandwidth the read bandwidth over it', () => {
    const t = fitTraffic(withTraffic, workingSetBytes, access({ strideBytes: 4096 }));
    const fill = traffic.readFillBytes!.value;
    expect(Math.abs(t.dramBytesPerUsefulByte! / (fill / 4) - 1)).toBeLessThan(0.03);
    const read = withTraffic.elements.deviceMemory!.readBandwidth!;
    expect(t.dramWriteBytes).toBe(0);
    expect(t.deviceMemoryBandwidth.read).toEqual({ value: read.value, source: read.source, confidence: read.confidence ?? null });
    expect(t.deviceMemoryBandwidth.bytesPerS).toBe(Math.round(read.value));
    expect(Math.abs(t.effectiveBandwidthBytesPerS! - read.value / t.dramBytesPerUsefulByte!) / t.effectiveBandwidthBytesPerS!).toBeLessThan(
      0.001,
    );
    expect(t.effectiveBandwidthBytesPerS!).toBeLessThan(read.value / 10);
    expect(t.summary).toMatch(/device-memory bytes per useful byte \(counters\): about [\d.]+ GB\/s of useful bandwidth/);
  });

  it('a read-modify-write pays each direction at its own bandwidth: useful bytes / (reads / read bandwidth + writes / write bandwidth)', () => {
    const t = fitTraffic(withTraffic, workingSetBytes, access({ pattern: 'rmw', strideBytes: 64 }));
    const memory = withTraffic.elements.deviceMemory!;
    const seconds = t.dramReadBytes! / memory.readBandwidth!.value + t.dramWriteBytes! / memory.writeBandwidth!.value;
    expect(Math.abs(t.effectiveBandwidthBytesPerS! * seconds - t.usefulBytes) / t.usefulBytes).toBeLessThan(0.002);
    expect(Math.abs(t.deviceMemoryBandwidth.bytesPerS! * seconds - (t.dramReadBytes! + t.dramWriteBytes!)) / t.usefulBytes).toBeLessThan(
      0.002,
    );
  });

  it('without a measured write bandwidth a pattern that writes gets no effective bandwidth, and says why; a read still does', () => {
    const memory = withTraffic.elements.deviceMemory!;
    const { writeBandwidth: _dropped, ...readOnly } = memory;
    const document = { ...withTraffic, elements: { ...withTraffic.elements, deviceMemory: readOnly } };
    const write = fitTraffic(document, workingSetBytes, access({ pattern: 'write' }));
    expect(write.dramBytesPerUsefulByte).toBeGreaterThan(0);
    expect(write.deviceMemoryBandwidth.write).toBeNull();
    expect(write.effectiveBandwidthBytesPerS).toBeNull();
    expect(write.summary).toContain('bandwidth it needs was not measured');
    expect(fitTraffic(document, workingSetBytes, access()).effectiveBandwidthBytesPerS).toBeGreaterThan(0);
  });

  it('a GPU whose traffic was never measured: no prediction, the bandwidth it has, and how to measure it', () => {
    const t = fitTraffic(withoutTraffic, workingSetBytes, access({ pattern: 'rmw' }));
    expect(t).toMatchObject({
      measured: false,
      method: null,
      dramBytesPerUsefulByte: null,
      dramReadBytes: null,
      used: null,
      effectiveBandwidthBytesPerS: null,
    });
    expect(t.accesses).toBe(Math.ceil(workingSetBytes / 128));
    expect(t.usefulBytes).toBe(t.accesses * 4 * 2);
    expect(t.deviceMemoryBandwidth.read?.value).toBe(withoutTraffic.elements.deviceMemory!.readBandwidth!.value);
    expect(t.summary).toContain('{"only":["traffic"]}');
    expect(t.summary).toContain(`/v1/gpus/${withoutTraffic.gpu.uuid}/probe`);
  });

  it('fitAdvice carries the traffic only for a described access (the old answer is unchanged otherwise)', () => {
    const plain = fitAdvice(withTraffic, workingSetBytes);
    expect('traffic' in plain).toBe(false);
    const described = fitAdvice(withTraffic, workingSetBytes, access());
    expect(described.traffic).toEqual(fitTraffic(withTraffic, workingSetBytes, access()));
    const { traffic: _traffic, ...rest } = described;
    expect(rest).toEqual(plain);
  });
});
