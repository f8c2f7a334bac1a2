import type { RawSeries } from '../model/document.js';

/**
 * Timed loads that another tenant's time slice stopped: where a raw series
 * keeps its load latencies, and how many of them exceed a limit. Shared by
 * the probe session (which looks after each family it measures) and the
 * plausibility checks (which cap what such series measured).
 */

/** The limit where device memory's latency was not measured: 25 µs at 2 GHz, where a time slice lasts milliseconds. */
export const STALL_CYCLES_WITHOUT_MEMORY_LATENCY = 50_000;
/** Probe ops whose results are timed loads, and where their latencies sit. */
const LOAD_LATENCY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  pchase: ['latenciesCycles'],
  'pchase.pair': ['firstLatenciesCycles', 'secondLatenciesCycles'],
  'selftest.consumer': ['consumedLatenciesCycles'],
  'l2.persist': ['withoutCycles', 'withCycles'],
};
/** Ops whose result holds a list of per-chaser or per-SM entries, each with `latenciesCycles`. */
const PER_ENTRY_LATENCY_OPS: Readonly<Record<string, 'series' | 'sms'>> = {
  'pchase.batch': 'series',
  'l2.partition': 'sms',
  'l2.farnear': 'sms',
};

/**
 * Timed loads in `raw` that took over `limitCycles` (another tenant's time
 * slice stopped them), of all timed loads there: what the probe session
 * looks at after each family it measures, before device memory's latency is known.
 */
export function stalledLoadsIn(
  raw: readonly RawSeries[],
  limitCycles = STALL_CYCLES_WITHOUT_MEMORY_LATENCY,
): { stalled: number; loads: number; limitCycles: number } {
  let stalled = 0;
  let loads = 0;
  for (const series of raw) {
    for (const latencies of loadLatencies(series)) {
      loads += latencies.length;
      stalled += countOver(latencies, limitCycles);
    }
  }
  return { stalled, loads, limitCycles };
}

/**
 * In a function of its own: inlined in stalledLoads' loops, V8 threw the
 * compiled loop away at each strategy's ownsSeries (a new call target) and
 * compiled it again, ~50 ms of a cold analysis over ~2 M loads (issue 17.6).
 */
export function countOver(latencies: readonly number[], limit: number): number {
  let over = 0;
  for (const latency of latencies) if (latency > limit) over += 1;
  return over;
}

/** Every list of timed-load latencies in one series, by its op. */
export function loadLatencies(series: RawSeries): Array<readonly number[]> {
  const result = series.result as Record<string, unknown> | null;
  if (!result || typeof result !== 'object') return [];
  const out: Array<readonly number[]> = [];
  for (const field of LOAD_LATENCY_FIELDS[series.op] ?? []) {
    const values = result[field];
    if (Array.isArray(values)) out.push(values as number[]);
  }
  const listField = PER_ENTRY_LATENCY_OPS[series.op];
  const entries = listField ? result[listField] : undefined;
  if (Array.isArray(entries)) {
    for (const entry of entries as Array<{ latenciesCycles?: unknown }>)
      if (Array.isArray(entry.latenciesCycles)) out.push(entry.latenciesCycles as number[]);
  }
  return out;
}
