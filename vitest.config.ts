import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each file runs in its own process: the handlers' configuration and pool are per process, as in Lambda.
    pool: 'forks',
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: each file runs its own PostgreSQL (and some a browser or a deploy), so more workers only contend.
    maxWorkers: 2,
  },
});
