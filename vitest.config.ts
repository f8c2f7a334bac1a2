import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import HeavyFirstSequencer from './test/helpers/heavy-first-sequencer.js';

/** The files whose worker processes run one after another (the `shared` project below). */
const SHARED_PROCESS = ['test/unit/**/*.test.ts', 'test/integration/api/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    projects: [
      // Pure code and in-process apps: each worker process runs many files, so each pays once for starting, loading
      // the server's modules and coverage's set-up, and the serialisers built once per process serve every app
      // (server/plugins/serializer-cache.ts). No file here loads a native addon or keeps global state.
      { extends: true, test: { name: 'shared', include: SHARED_PROCESS, isolate: false } },
      // Native addons (NVML, the fake library's scenario) keep per-process state: one process per file.
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: SHARED_PROCESS } },
    ],
    // vitest's default is one worker fewer than the cores: on a 2-core machine the files ran one at a time.
    // The main process only collects results, and many files wait part of their time (on a daemon's probe, a
    // timer, a browser), so one worker more than the cores keeps them busy: 184 → 178 s on 2 cores.
    maxWorkers: availableParallelism() + 1,
    // A folder the run's files share: whole simulated discoveries are computed once (test/helpers/run-cache.ts).
    globalSetup: ['test/helpers/global-setup.ts'],
    // Without a previous run's durations, the files that run whole discoveries or daemon probes start first,
    // not last: a long file started last leaves the other core idle (test/helpers/heavy-first-sequencer.ts).
    sequence: { sequencer: HeavyFirstSequencer },
    // Generous, so no test fails by timeout on two busy cores; a test that runs whole simulated discoveries
    // or daemon probes sets its own (WHOLE_DISCOVERY_TIMEOUT_MS). A hang still fails, later.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // CI prints every test, so each skipped GPU test shows the reason in its title.
    reporters: process.env.CI ? ['verbose'] : ['default'],
    coverage: {
      provider: 'v8',
      include: ['server/**/*.ts'],
      reporter: ['text-summary'],
      // Floors, measured without a GPU (CI): raise them when coverage rises, never lower them.
      thresholds: { lines: 93, functions: 93, branches: 80, statements: 92 },
    },
  },
});
