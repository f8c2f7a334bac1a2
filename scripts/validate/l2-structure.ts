/**
 * validate:gpu's L2-structure lines (issue 9): partitions, their SM groups
 * and every latency class the document holds, and whether consecutive runs
 * measured the same SM → partition map.
 */
import type { ElementTopology, LatencyValue } from '../../server/model/document.js';
import { sameInEveryRun } from './same-in-every-run.js';

const isLatency = (value: unknown): value is LatencyValue =>
  typeof value === 'object' &&
  value !== null &&
  (value as { unit?: unknown }).unit === 'cycles' &&
  typeof (value as { p50?: unknown }).p50 === 'number';

/** The L2's partitions as lines; one line saying so when they were not measured. */
export function renderL2Structure(l2: ElementTopology | undefined): string[] {
  const partitions = l2?.partitions;
  if (!partitions) return ['L2 partitions: not measured'];
  const latencies = Object.entries(partitions)
    .filter((entry): entry is [string, LatencyValue] => isLatency(entry[1]))
    .map(([name, value]) => `${name} ${value.p50.toFixed(0)}`);
  const lines = [
    `L2 partitions: ${partitions.count} (SMs per group ${partitions.smGroups.map((g) => g.length).join(' + ')}; confidence ${partitions.confidence.toFixed(2)}); latencies p50 in cycles: ${latencies.join(', ')}`,
  ];
  for (const [name, value] of Object.entries(partitions)) {
    if (typeof value === 'number' && name !== 'count' && name !== 'confidence') lines.push(`L2 ${name}: ${value}`);
  }
  const window = partitions.persistingWindow;
  if (window)
    lines.push(`L2 persisting window of ${window.windowBytes} B: hit rate ${window.hitRateWithout} without → ${window.hitRateWith} with`);
  if (l2?.amount) lines.push(`L2 amount: ${l2.amount.value} per ${l2.amount.per} [${l2.amount.source}]`);
  return lines;
}

/** Whether every run measured the same SM → partition groups. */
export function samePartitionMap(l2s: Array<ElementTopology | undefined>): string {
  return sameInEveryRun(
    'SM → L2 partition map',
    l2s.map((l2) => l2?.partitions?.smGroups ?? null),
  );
}
