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
  },
});
