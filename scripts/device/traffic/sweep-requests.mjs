#!/usr/bin/env node
// Prints the probe's traffic requests for the device sweep (traffic-suite.sh),
// one JSON line each: the paper's stride sweep (1 to 1024 elements of 4 B) at
// its footprints of 50M and 200M floats, every pattern, fresh and written
// targets, by counters and by timing; wider elements; and the read sweep under
// each L2 fetch granularity. Usage: node sweep-requests.mjs [counters|timing|all]
const which = process.argv[2] ?? 'all';
const strides = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
const footprints = [50e6 * 4, 200e6 * 4];
let id = 0;
const out = [];
const request = (args) => out.push(JSON.stringify({ id: ++id, op: 'traffic', args }));

function cases(elementBytes, patterns, targets) {
  const list = [];
  for (const pattern of patterns)
    for (const strideElements of strides)
      for (const target of pattern === 'read' ? ['written'] : targets) list.push({ pattern, elementBytes, strideElements, target });
  return list;
}

for (const method of ['counters', 'timing']) {
  if (which !== 'all' && which !== method) continue;
  const extra = method === 'timing' ? { repetitions: 5 } : {};
  for (const footprintBytes of footprints) {
    for (const pattern of ['read', 'write', 'rmw', 'vecmul'])
      request({ method, footprintBytes, cases: cases(4, [pattern], ['fresh', 'written']), ...extra });
  }
  for (const elementBytes of [8, 16])
    request({ method, footprintBytes: footprints[1], cases: cases(elementBytes, ['read', 'write', 'rmw'], ['written']), ...extra });
  for (const l2FetchGranularityBytes of [32, 64, 128])
    request({ method, footprintBytes: footprints[1], l2FetchGranularityBytes, cases: cases(4, ['read', 'rmw'], ['written']), ...extra });
}
// A request that must fail cleanly: a metric this GPU does not count.
if (which !== 'timing')
  request({
    method: 'counters',
    footprintBytes: 1 << 20,
    metrics: ['no_such__metric.sum'],
    cases: [{ pattern: 'read', elementBytes: 4, strideElements: 1 }],
  });
console.log(out.join('\n'));
