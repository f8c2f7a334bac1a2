/**
 * vitest's file order (vitest.config.ts, sequence.sequencer). Without a
 * previous run's durations (a fresh clone: CI) vitest starts the largest
 * files first, but a file's size says little about its time: the 35-line
 * calibration test runs four simulated discoveries, and started last it ran
 * alone on one core for over a minute at the end. Without durations, files
 * that run whole simulated discoveries or daemon probes go first (their
 * source names the helpers or timeouts they use), largest first within each
 * group; with durations, vitest's own order (failed first, longest first).
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** What a test file that runs whole simulated discoveries or daemon probes names. */
const HEAVY_MARKERS =
  /\b(simulatedDiscovery|calibrationRun|startDaemon|copyProbedDatabase|startFakeNvmlDaemon|discover)\(|\b(WHOLE_DISCOVERY_TIMEOUT_MS|DAEMON_PROBE_WAIT_MS)\b/;

function heavy(file: string): boolean {
  try {
    return HEAVY_MARKERS.test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

function sizeBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export default class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    const timed = files.every(
      (spec) => cache.getFileTestResults(`${spec.project.name}:${path.relative(root, spec.moduleId)}`) !== undefined,
    );
    if (timed) return super.sort(files);
    const ranked = files.map((spec) => ({ spec, heavy: heavy(spec.moduleId), sizeBytes: sizeBytes(spec.moduleId) }));
    // One project's files together, as vitest's own order keeps them (the `shared` project's worker processes run
    // its files one after another); interleaved, the cold run took 204 s on 2 cores, grouped 200 s.
    ranked.sort(
      (a, b) => a.spec.project.name.localeCompare(b.spec.project.name) || Number(b.heavy) - Number(a.heavy) || b.sizeBytes - a.sizeBytes,
    );
    return ranked.map((entry) => entry.spec);
  }
}
