/** `topod fit` for people: the advice as a table with the numbers it used. */
import type { FitAdvice } from '../model/fit-schema.js';
import { formatBytes } from '../faces/documents.js';
import { table } from './format.js';
import type { TableView } from './output.js';

export type FitAnswer = FitAdvice;

const yesNo = (value: boolean | null) => (value === null ? '?' : value ? 'yes' : 'no');

/** The basis above the table and the summary below it; without headers, only the profiles' rows. */
export function fitText(advice: FitAnswer, view: TableView = { wide: false, headers: true }): string {
  const latency = (p: FitAdvice['profiles'][number]) =>
    p.expectedLatency
      ? `${p.latencyClass} ~${Math.round(p.expectedLatency.meanCycles)} cy${p.expectedLatency.meanNs === null ? '' : ` (${Math.round(p.expectedLatency.meanNs)} ns)`}`
      : p.latencyClass;
  const basis = advice.basis;
  const rows = table(
    ['profile', 'SMs', 'memory', 'L2 share', 'one SM reaches', 'in share', 'in reach', 'expect'],
    advice.profiles.map((p) => [
      p.name,
      String(p.multiprocessorCount),
      formatBytes(p.memorySizeBytes),
      p.l2ShareBytes === null ? '?' : formatBytes(p.l2ShareBytes),
      p.reachablePerSmBytes === null ? '?' : formatBytes(p.reachablePerSmBytes),
      yesNo(p.fitsInL2Share),
      yesNo(p.fitsInReachableL2),
      latency(p),
    ]),
    view.headers,
  );
  if (!view.headers) return rows;
  return [
    `${advice.gpuName} ${advice.gpuUuid}: working set ${formatBytes(advice.workingSetBytes)}`,
    `L2 ${basis.l2SizeBytes === null ? 'unknown' : formatBytes(basis.l2SizeBytes)} (${basis.l2SizeSource ?? '?'}), segment ${basis.l2SegmentBytes === null ? 'not measured' : formatBytes(basis.l2SegmentBytes)}, ${basis.memorySliceCount ?? '?'} memory slices, MIG ${basis.migMode ?? 'n/a'}`,
    rows,
    advice.summary,
  ].join('\n');
}
