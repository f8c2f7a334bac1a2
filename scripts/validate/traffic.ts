/**
 * validate:gpu's traffic lines (issue 20): what topod measured of the L2 ↔
 * device-memory traffic, beside what the LLC-memory traffic paper observed on
 * the A100 (shared/seeds/llc-memory-traffic-paper.txt) — context from another
 * GPU, not a reference answer.
 */
import type { TrafficTopology } from '../../server/model/traffic-schema.js';

/** The paper's A100 observations (§IV-A, Table II, §V-B). */
export const PAPER_A100 = {
  readTransactionBytes: '32 B (Table I; Observation 3)',
  writeTransactionBytes: '32 B',
  fullSectorStoresRead: 'no: a streaming store at stride 1 (Observation 1)',
  storesAllocateFresh: 'yes: an allocating store even to a never-written array (Observation 2)',
  prefetch: '≈ 1.6× read bytes from stride 16 floats on (Observation 4, Table II)',
  accuracy: 'model accuracy 93.4 % (50M floats), 97.9 % (200M floats)',
} as const;

const show = (v: { value: number | boolean; method: string; confidence: number } | null | undefined, unit = '') =>
  v
    ? `${typeof v.value === 'boolean' ? (v.value ? 'yes' : 'no') : `${v.value}${unit}`} (${v.method}, confidence ${v.confidence})`
    : 'not measured';

/** The traffic section as lines, each with the paper's A100 value beside it; one line when not measured. */
export function renderTraffic(traffic: TrafficTopology | null | undefined): string[] {
  if (!traffic) return ['traffic: not measured (opt-in: --traffic, or POST /v1/gpus/{id}/probe with only ["traffic"])'];
  const lines = [
    `traffic: ${traffic.method}${traffic.countersUnavailable ? ` (counters unavailable: ${traffic.countersUnavailable})` : ''}, arrays of ${traffic.footprintBytes} B — topod | paper, A100`,
    `  read transaction:   ${show(traffic.readTransactionBytes, ' B')} | ${PAPER_A100.readTransactionBytes}`,
    `  write transaction:  ${show(traffic.writeTransactionBytes, ' B')} | ${PAPER_A100.writeTransactionBytes}`,
    `  whole-sector stores read: ${show(traffic.fullSectorStoresRead)} | ${PAPER_A100.fullSectorStoresRead}`,
    `  stores allocate (fresh): ${show(traffic.storesAllocate.fresh)}, (written): ${show(traffic.storesAllocate.written)} | ${PAPER_A100.storesAllocateFresh}`,
    `  isolated read fill: ${show(traffic.readFillBytes, ' B')}, prefetch factor ${show(traffic.prefetchFactor, '×')}, departs from the line model at ${traffic.departsFromLineModelAtStrideBytes ?? 'never'} B | ${PAPER_A100.prefetch}`,
  ];
  if (traffic.fallbackError)
    lines.push(
      `  timing fallback vs counters: median ${traffic.fallbackError.medianPercent} %, max ${traffic.fallbackError.maxPercent} % | (the paper had counters only)`,
    );
  lines.push(`  paper: ${PAPER_A100.accuracy}`);
  return lines;
}
