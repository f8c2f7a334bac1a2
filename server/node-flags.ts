/**
 * V8 flags the daemon runs with (`npm start`, the Dockerfile's CMD, and the
 * benchmarks' server processes). A 4 MiB semi-space caps the young generation:
 * under 100 polling connections the default (16 MiB) grows RSS by ~25 MB for
 * no measurable throughput gain (BENCHMARKS.md). test/unit/node-flags.test.ts
 * keeps package.json and the Dockerfile in step with this list.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
