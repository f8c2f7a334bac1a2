import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Native addons (NVML, the fake library's scenario) keep per-process state: one process per file.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // CI prints every test, so each skipped GPU test shows the reason in its title.
    reporters: process.env.CI ? ['verbose'] : ['default'],
    coverage: {
      provider: 'v8',
      include: ['server/**/*.ts'],
      reporter: ['text-summary'],
      // Floors, measured without a GPU (CI): raise them when coverage rises, never lower them.
      thresholds: { lines: 90, functions: 90, branches: 78, statements: 88 },
    },
  },
});
