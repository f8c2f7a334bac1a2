import { describe, expect, it } from 'vitest';
import type { TopologyElements } from '../../../server/model/document.js';
import { compareToReference, renderTable } from '../../../scripts/validate/compare.js';
import { parseReference } from '../../../scripts/validate/reference.js';

// A synthetic reference file in the shape validate:gpu reads (not real figures).
const MARKDOWN = `# refs

## Some Other GPU

| element | attribute | MT4G | other |
|---|---|---|---|
| L1 | size | 1 B | |

## Test GPU X (sim)

| element | attribute | MT4G | other references |
|---|---|---|---|
| L1 | size | 1000 B (conf 0.97) | 1 KB |
| L1 | line / fetch granularity | 128 B / 32 B | |
| L1 | latency | 40 cycles | |
| L2 | latency | mean 200, p50 210 | |
| Constant L1.5 | size / fetch / latency | > 64 KiB (not measurable) / 256 B / 100 cycles | |
| Device memory | read / write bandwidth | 1 / 2 GiB/s | |
| Texture | amount per SM / shared with | 1 / Read-only, L1 | |
`;

describe('parseReference', () => {
  it('reads the section naming the GPU, splitting combined attributes and values', () => {
    const refs = parseReference(MARKDOWN, 'test gpu x');
    expect(refs).toEqual([
      { element: 'l1', attribute: 'size', value: 1000, text: '1000 B (conf 0.97)' },
      { element: 'l1', attribute: 'lineSize', value: 128, text: '128 B' },
      { element: 'l1', attribute: 'fetchGranularity', value: 32, text: '32 B' },
      { element: 'l1', attribute: 'latency', value: 40, text: '40 cycles' },
      { element: 'l2', attribute: 'latency', value: 200, text: 'mean 200, p50 210' },
      { element: 'constantL15', attribute: 'size', value: 65536, text: '> 64 KiB (not measurable)', bound: 'lower' },
      { element: 'constantL15', attribute: 'fetchGranularity', value: 256, text: '256 B' },
      { element: 'constantL15', attribute: 'latency', value: 100, text: '100 cycles' },
      { element: 'deviceMemory', attribute: 'readBandwidth', value: 1024 ** 3, text: '1' },
      { element: 'deviceMemory', attribute: 'writeBandwidth', value: 2 * 1024 ** 3, text: '2 GiB/s' },
      { element: 'texture', attribute: 'amount', value: 1, text: '1' },
      { element: 'texture', attribute: 'sharedWith', value: 2, text: 'Read-only, L1', names: ['l1', 'readOnly'] },
    ]);
    expect(parseReference(MARKDOWN, 'no such gpu')).toEqual([]);
  });
});

describe('compareToReference', () => {
  const latency = (mean: number) => ({
    unit: 'cycles' as const,
    source: 'microbenchmark' as const,
    mean,
    p50: mean,
    p95: mean,
    stdev: 0,
    sampleCount: 10,
    confidence: 1,
  });
  const elements: TopologyElements = {
    l1: {
      size: { value: 1020, unit: 'bytes', source: 'microbenchmark', confidence: 0.95 },
      lineSize: { value: 64, unit: 'bytes', source: 'microbenchmark', confidence: 1 },
      fetchGranularity: { value: 32, unit: 'bytes', source: 'microbenchmark', confidence: 1 },
      latency: latency(43),
    },
    l2: { latency: latency(290) },
    constantL15: { size: { value: 65536, unit: 'bytes', source: 'microbenchmark', bound: 'lower', confidence: 1 } },
    shared: { size: { value: 4096, unit: 'bytes', source: 'api' } },
    texture: { sharedWith: ['readOnly', 'l1'] },
    readOnly: { cachesGlobalLoadsByDefault: false },
    deviceMemory: {
      readBandwidth: { value: 1.1 * 1024 ** 3, unit: 'bytes/s', source: 'microbenchmark' },
      writeBandwidth: { value: 1.5 * 1024 ** 3, unit: 'bytes/s', source: 'microbenchmark' },
    },
  };
  const rows = compareToReference(elements, parseReference(MARKDOWN, 'Test GPU X'));
  const verdict = (element: string, attribute: string) =>
    rows.find((row) => row.element === element && row.attribute === attribute)?.verdict;

  it('applies the tolerance of each kind of attribute', () => {
    expect(verdict('l1', 'size')).toBe('ok'); // 2 % off
    expect(verdict('l1', 'lineSize')).toBe('DIFFERS'); // discrete: must be equal
    expect(verdict('l1', 'fetchGranularity')).toBe('ok');
    expect(verdict('l1', 'latency')).toBe('ok'); // 7.5 % off, the reference consumes the load
    expect(verdict('l2', 'latency')).toBe('see note: reference does not consume the load');
    expect(verdict('constantL15', 'size')).toBe('ok (bound)');
    expect(verdict('shared', 'size')).toBe('api');
    expect(verdict('texture', 'sharedWith')).toBe('ok'); // the same set, in any order
    expect(rows.find((row) => row.attribute === 'cachesGlobalLoadsByDefault')).toMatchObject({
      element: 'readOnly',
      value: 'no',
      verdict: 'info',
    });
    expect(verdict('deviceMemory', 'readBandwidth')).toBe('ok (not below)');
    expect(verdict('deviceMemory', 'writeBandwidth')).toBe('BELOW');
    const other = compareToReference({ texture: { sharedWith: ['readOnly'] } }, parseReference(MARKDOWN, 'Test GPU X'));
    expect(other.find((row) => row.attribute === 'sharedWith')?.verdict).toBe('DIFFERS');
    expect(compareToReference({ l1: { sharedWith: [] } }, [])[0]).toMatchObject({ value: 'none', verdict: 'no reference' });
  });

  it('renders one aligned line per row under a header', () => {
    const lines = renderTable(rows).split('\n');
    expect(lines).toHaveLength(rows.length + 1);
    expect(lines[0]).toMatch(/^element\s+attribute\s+topod\s+conf\s+reference\s+dev\s+verdict$/);
    expect(lines.find((line) => line.startsWith('constantL15'))).toContain('≥ 65536 bytes');
  });
});
