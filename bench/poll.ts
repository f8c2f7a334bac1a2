/**
 * `npm run bench:poll` — dashboards polling with If-None-Match: every request
 * carries the current ETag and gets 304. topod's conditional GET against a
 * bare fastify route doing the same string compare, each in a fresh process
 * (harness in bench/api.ts). Prints the ratio ours/bare last (goal >= 0.9).
 *
 * The NVML refresh cost comes from the daemon's poller
 * (readNvmlRefreshCost in bench/api.ts); set TOPOD_POLL_MS to poll faster
 * and TOPOD_NVML_LIB to a fake libnvidia-ml to make refreshes do real work.
 */
import { compare, printTable } from './api.js';
import { nvmlRefreshCost } from './nvml-refresh.js';

const { ours, app, bare, ratio } = await compare(true);
printTable([ours, app, bare]);
const refresh = ours.nvmlRefresh;
console.log(
  refresh === null
    ? 'NVML refresh: the daemon ran without a poller'
    : `NVML refresh: ${refresh.reads} reads during the run, last took ${refresh.lastReadDurationMs?.toFixed(3) ?? 'n/a'} ms`,
);
const cost = await nvmlRefreshCost();
if (cost.figures) {
  const f = cost.figures;
  console.log(
    `NVML refresh cost, ${cost.label}: ${f.devices} device(s), ${f.reads} reads: whole read median ${f.wholeReadMedianMs.toFixed(3)} ms (p95 ${f.wholeReadP95Ms.toFixed(3)}), per device median ${f.perDeviceMedianMs.toFixed(3)} ms`,
  );
} else {
  console.log(`NVML refresh cost: not measured (${cost.label})`);
}
console.log(`goal: ratio >= 0.9; topod p99 ${ours.p99Ms} ms`);
console.log(`ratio ours/bare: ${ratio.toFixed(3)}`);
