import { defineConfig } from 'vitest/config';

/**
 * Files that measure rates and latencies under a scaled-down quota (5,000 clients, a busy market): they run after
 * the rest, alone, since a deploy or a browser on the other core starves the local Lambda workers they time.
 */
const runAlone = ['test/realtime/quota.test.ts'];

const shared = {
  // Each file runs in its own process: the handlers' configuration and pool are per process, as in Lambda.
  pool: 'forks' as const,
  globalSetup: ['test/support/global-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...runAlone],
          // Two cores: each file runs its own PostgreSQL (and some a browser or a deploy), so more workers only contend.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: { ...shared, name: 'alone', include: runAlone, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
