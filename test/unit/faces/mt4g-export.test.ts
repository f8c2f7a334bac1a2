/**
 * The MT4G export writes every key MT4G writes, with MT4G's number types
 * (`38.0` where MT4G holds a double), and says which values are MT4G's own
 * "unknown" rather than facts. The key list kept in the project
 * (test/fixtures/faces/mt4g-key-paths.json) is checked always; MT4G's own
 * H100 and A100 results, where shared/third-party holds them, must give the
 * same list.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mt4gJson, mt4gResult, mt4gRunRecord } from '../../../server/faces/mt4g-export.js';
import { dumpMt4g, formatDouble, mt4gFloat, plainJson, sortKeys, type Mt4gJson } from '../../../server/faces/mt4g-json.js';
import { mergedGpu, recordedH100Result, simulatedH100Result } from '../../helpers/face-documents.js';
import { jsonKeyPaths, mt4gOwnPaths, type LeafType } from '../../helpers/json-key-paths.js';
import { WHOLE_DISCOVERY_TIMEOUT_MS } from '../../helpers/simulated-discovery.js';
import { mergeMigInstance } from '../../../server/topology/merge.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const KEY_LIST = JSON.parse(readFileSync(path.join(HERE, '../../fixtures/faces/mt4g-key-paths.json'), 'utf8')) as {
  paths: Record<string, LeafType>;
};
const SAMPLES = path.resolve(HERE, '../../../../shared/third-party/mt4g-samples');
const SAMPLE_FILES = ['NVIDIA_H100_80GB_HBM3.json', 'NVIDIA_A100-PCIE-40GB.json'];
const HOST = { cpuModel: 'AMD EPYC 9374F 32-Core Processor', osName: 'Linux 6.8.0-64-generic' };

describe('dumpMt4g: nlohmann’s dump(4)', () => {
  it('writes a double as a double: 38.0, not 38; other numbers as JSON.stringify does', () => {
    expect(formatDouble(38)).toBe('38.0');
    expect(formatDouble(0)).toBe('0.0');
    expect(formatDouble(-2)).toBe('-2.0');
    expect(formatDouble(0.999980000399992)).toBe('0.999980000399992');
    expect(formatDouble(1126.3999999999996)).toBe('1126.3999999999996');
    expect(formatDouble(1e-7)).toBe('1e-7');
    expect(formatDouble(Number.NaN)).toBe('null');
    expect(JSON.parse(formatDouble(1e-7))).toBe(1e-7);
  });

  it('is JSON.stringify(…, null, 4) but for the marked doubles, and parses back to the plain value', () => {
    const value: Mt4gJson = sortKeys({
      b: { mean: mt4gFloat(38), n: 255, list: ['L1', 'Read Only'], empty: {}, none: [] },
      a: mt4gFloat(0.5),
      c: null,
      d: true,
      e: 'ü "q"',
    });
    const text = dumpMt4g(value);
    expect(text).toBe(JSON.stringify(plainJson(value), null, 4).replace('"mean": 38,', '"mean": 38.0,'));
    expect(JSON.parse(text)).toEqual(plainJson(value));
    expect(jsonKeyPaths(text)).toMatchObject({
      'b.mean': 'float',
      'b.n': 'int',
      a: 'float',
      'b.list': 'array',
      c: 'null',
      d: 'bool',
      e: 'string',
    });
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});

describe('the key paths MT4G writes', () => {
  for (const file of SAMPLE_FILES) {
    const sample = path.join(SAMPLES, file);
    it.skipIf(!existsSync(sample))(
      existsSync(sample)
        ? `the project’s key list is MT4G’s own ${file}, types included`
        : `skipped: MT4G’s ${file} is not at ${sample} (shared/third-party holds it)`,
      () => {
        expect(jsonKeyPaths(readFileSync(sample, 'utf8'))).toEqual(KEY_LIST.paths);
      },
    );
  }

  it(
    'a result with every element, bandwidths included (simulated H100): exactly MT4G’s key paths and number types',
    async () => {
      const { merged } = mergedGpu(await simulatedH100Result(), 'h100-80gb-mig-off.json');
      const text = mt4gJson(merged, { run: mt4gRunRecord(merged, HOST) });
      expect(mt4gOwnPaths(jsonKeyPaths(text))).toEqual(KEY_LIST.paths);
      const exported = JSON.parse(text) as Record<string, any>;
      expect(exported['meta']).toMatchObject({ hostCpu: HOST.cpuModel, os: HOST.osName });
      expect(exported['memory'].l1.latency.sampleSize).toBe(merged.elements.l1!.latency!.sampleCount);
      expect(exported['memory'].l1.globalL1CacheSupported).toBe(true);
      // The runtime's answers, from the hello: no longer MT4G's unknown.
      expect(exported['compute']).toMatchObject({ concurrentKernels: true, supportsCooperativeLaunch: true });
      expect(exported['memory'].l1.localL1CacheSupported).toBe(true);
      for (const key of ['compute.concurrentKernels', 'compute.supportsCooperativeLaunch', 'memory.l1.localL1CacheSupported'])
        expect(exported['topod'].unknown[key], key).toBeUndefined();
      expect(exported['topod'].withheld).toEqual({});
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it('a result with missing elements (the recorded H100) writes a subset of MT4G’s paths, every one MT4G always writes among them', () => {
    const { merged } = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
    const paths = mt4gOwnPaths(jsonKeyPaths(mt4gJson(merged)));
    for (const [key, type] of Object.entries(paths)) expect(KEY_LIST.paths[key], key).toBe(type);
    for (const key of [
      'meta.driver',
      'meta.runtime',
      'meta.gpuCompiler',
      'meta.hostCompiler',
      'meta.hostCpu',
      'meta.os',
      'general.asicRevision',
      'compute.concurrentKernels',
      'compute.supportsCooperativeLaunch',
      'memory.l1.globalL1CacheSupported',
      'memory.l1.localL1CacheSupported',
      'memory.l1.latency.sampleSize',
    ]) {
      expect(paths[key], key).toBe(KEY_LIST.paths[key]);
    }
  });

  it('names every value written as MT4G’s “unknown”, and never calls a value it has unknown', () => {
    const { merged } = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
    const exported = mt4gResult(merged) as Record<string, any>;
    const unknown = exported['topod'].unknown as Record<string, string>;
    // No run record given: MT4G's "unknown" compiler and host, driver and runtime 0.
    expect(exported['meta']).toMatchObject({
      hostCompiler: 'unknown',
      gpuCompiler: 'unknown',
      hostCpu: 'unknown',
      os: 'unknown',
      driver: 0,
      runtime: 0,
    });
    for (const key of ['meta.hostCompiler', 'meta.gpuCompiler', 'meta.hostCpu', 'meta.os', 'meta.driver', 'meta.runtime'])
      expect(unknown[key], key).toEqual(expect.any(String));
    // What the document has is never listed as unknown.
    expect(unknown['compute.multiProcessorCount']).toBeUndefined();
    expect(unknown['general.clockRate.value']).toBeUndefined();
    expect(exported['general'].clockRate.value).toBe(merged.device.clockRateKHz);
    // The measured L1 (found by chasing ld.global.ca loads) caches global loads.
    expect(unknown['memory.l1.globalL1CacheSupported']).toBeUndefined();
    expect(exported['memory'].l1.globalL1CacheSupported).toBe(true);
    for (const [key, why] of Object.entries(unknown)) expect(why.length, key).toBeGreaterThan(10);
  });

  it('the run record: the probe runtime’s driver API version when it keyed the result; the host from the caller', () => {
    const { merged } = mergedGpu(recordedH100Result(), null);
    expect(mt4gRunRecord(merged, HOST)).toMatchObject({ driver: null, hostCpu: HOST.cpuModel, os: HOST.osName });
    const runtimeKeyed = { ...merged, probe: { ...merged.probe, driverVersion: 'cuda-13000' } };
    expect(mt4gRunRecord(runtimeKeyed, HOST).driver).toBe(13000);
    const exported = mt4gResult(runtimeKeyed, { run: mt4gRunRecord(runtimeKeyed, HOST) }) as Record<string, any>;
    expect(exported['meta'].driver).toBe(13000);
    expect(exported['topod'].unknown['meta.driver']).toBeUndefined();
  });

  it('a MIG device: no main or l2 latency without their bandwidths (held back under topod.withheld), every path still MT4G’s', () => {
    const gpu = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
    const parent = gpu.merged;
    expect(gpu.migUuids.length).toBeGreaterThan(0);
    const view = mergeMigInstance(parent, gpu.migUuids[0]!)!;
    const text = mt4gJson(parent, { migDevice: view });
    const exported = JSON.parse(text) as Record<string, any>;
    expect(exported['memory'].l2.latency).toBeUndefined();
    expect(exported['memory'].main.latency).toBeUndefined();
    expect(exported['topod'].withheld['memory.l2.latency'].mean).toBe(parent.elements.l2!.latency!.mean);
    expect(exported['topod'].withheld['memory.main.latency'].mean).toBe(parent.elements.deviceMemory!.latency!.mean);
    for (const [key, type] of Object.entries(mt4gOwnPaths(jsonKeyPaths(text)))) expect(KEY_LIST.paths[key], key).toBe(type);
  });
});
