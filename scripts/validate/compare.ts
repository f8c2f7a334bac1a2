import type { ElementTopology, TopologyElements } from '../../server/model/document.js';
import type { ReferenceValue } from './reference.js';

/**
 * One row per measured attribute, beside its reference where one exists.
 * Verdicts follow the acceptance rules of the discovery issue: discrete
 * attributes (line, fetch, amount) must equal the reference; sizes lie within
 * 3 %; latencies within 10 % only where the reference's method consumes the
 * load (MT4G's L1, read-only and shared kernels do; its L2, texture,
 * constant-L1 and device-memory kernels stop the clock before the load
 * returns, so topod's consumed figure is expected to be higher there).
 */
export interface ComparisonRow {
  element: string;
  attribute: string;
  value: string;
  confidence: string;
  reference: string;
  deviation: string;
  verdict: string;
}

const DISCRETE = new Set(['lineSize', 'fetchGranularity', 'amount']);
const LATENCY_CONSUMED_BY_REFERENCE = new Set(['l1', 'readOnly', 'shared']);
const SIZE_TOLERANCE = 0.03;
const LATENCY_TOLERANCE = 0.1;
const ATTRIBUTES = [
  'size',
  'segmentSize',
  'amount',
  'latency',
  'lineSize',
  'fetchGranularity',
  'fillGranularity',
  'missPenalty',
  'readBandwidth',
  'writeBandwidth',
] as const;
const BANDWIDTH = new Set(['readBandwidth', 'writeBandwidth']);

export function compareToReference(elements: TopologyElements, references: readonly ReferenceValue[]): ComparisonRow[] {
  const rows: ComparisonRow[] = [];
  for (const [element, topology] of Object.entries(elements) as Array<[string, ElementTopology]>) {
    for (const attribute of ATTRIBUTES) {
      const measured = measuredOf(topology, attribute);
      if (!measured) continue;
      const reference = references.find((ref) => ref.element === element && ref.attribute === attribute);
      rows.push({ element, attribute, ...measured, ...judge(element, attribute, measured.number, measured.source, reference) });
    }
    if (topology.sharedWith) rows.push(sharedWithRow(element, topology.sharedWith, references));
    if (topology.cachesGlobalLoadsByDefault !== undefined) {
      rows.push({
        element,
        attribute: 'cachesGlobalLoadsByDefault',
        value: topology.cachesGlobalLoadsByDefault ? 'yes' : 'no',
        confidence: '',
        reference: '',
        deviation: '',
        verdict: 'info',
      });
    }
  }
  return rows;
}

/** Physical sharing: the same set of elements as the reference names, or DIFFERS. */
function sharedWithRow(element: string, sharedWith: readonly string[], references: readonly ReferenceValue[]): ComparisonRow {
  const measured = [...sharedWith].sort();
  const reference = references.find((ref) => ref.element === element && ref.attribute === 'sharedWith');
  const value = measured.length ? measured.join(', ') : 'none';
  if (!reference?.names)
    return { element, attribute: 'sharedWith', value, confidence: '', reference: '', deviation: '', verdict: 'no reference' };
  const same = JSON.stringify(measured) === JSON.stringify(reference.names);
  return {
    element,
    attribute: 'sharedWith',
    value,
    confidence: '',
    reference: reference.text,
    deviation: '',
    verdict: same ? 'ok' : 'DIFFERS',
  };
}

function measuredOf(
  topology: ElementTopology,
  attribute: (typeof ATTRIBUTES)[number],
): { value: string; confidence: string; number: number; source: string } | null {
  if (attribute === 'latency') {
    const latency = topology.latency;
    if (!latency) return null;
    const ns = latency.meanNs === undefined ? '' : ` (${latency.meanNs} ns)`;
    return {
      value: `mean ${latency.mean} p50 ${latency.p50} cycles${ns}`,
      confidence: format(latency.confidence),
      number: latency.mean,
      source: latency.source,
    };
  }
  const value = topology[attribute];
  if (!value) return null;
  const bound = value.bound === 'lower' ? '≥ ' : value.bound === 'upper' ? '≤ ' : '';
  return {
    value: `${bound}${value.value} ${value.unit} [${value.source}]`,
    confidence: format(value.confidence),
    number: value.value,
    source: value.source,
  };
}

function judge(
  element: string,
  attribute: string,
  value: number,
  source: string,
  reference: ReferenceValue | undefined,
): Pick<ComparisonRow, 'reference' | 'deviation' | 'verdict'> {
  if (!reference) return { reference: '', deviation: '', verdict: source === 'api' ? 'api' : 'no reference' };
  const deviation = (value - reference.value) / reference.value;
  const shown = { reference: reference.text, deviation: `${(deviation * 100).toFixed(1)} %` };
  if (DISCRETE.has(attribute)) return { ...shown, verdict: value === reference.value ? 'ok' : 'DIFFERS' };
  if (reference.bound === 'lower') return { ...shown, verdict: value >= reference.value ? 'ok (bound)' : 'DIFFERS' };
  // MT4G's one fixed launch lands under what the bus gives; topod searches the launch geometry, so it should not be slower.
  if (BANDWIDTH.has(attribute)) return { ...shown, verdict: value >= reference.value ? 'ok (not below)' : 'BELOW' };
  if (attribute === 'size' || attribute === 'segmentSize')
    return { ...shown, verdict: Math.abs(deviation) <= SIZE_TOLERANCE ? 'ok' : 'DIFFERS' };
  if (attribute === 'latency') {
    if (!LATENCY_CONSUMED_BY_REFERENCE.has(element)) return { ...shown, verdict: 'see note: reference does not consume the load' };
    return { ...shown, verdict: Math.abs(deviation) <= LATENCY_TOLERANCE ? 'ok' : 'DIFFERS' };
  }
  return { ...shown, verdict: 'info' };
}

function format(confidence: number | undefined): string {
  return confidence === undefined ? '' : confidence.toFixed(3);
}

/** A fixed-width text table. */
export function renderTable(rows: readonly ComparisonRow[]): string {
  const header: ComparisonRow = {
    element: 'element',
    attribute: 'attribute',
    value: 'topod',
    confidence: 'conf',
    reference: 'reference',
    deviation: 'dev',
    verdict: 'verdict',
  };
  const all = [header, ...rows];
  const keys = Object.keys(header) as Array<keyof ComparisonRow>;
  const widths = keys.map((key) => Math.max(...all.map((row) => row[key].length)));
  return all
    .map((row) =>
      keys
        .map((key, i) => row[key].padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
