import { defineConfig } from 'vitest/config';

/** Tests that need no stack: no database, no gateway, nothing listening but what the test itself opens. */
const unit = ['test/unit/**/*.test.ts'];

/**
 * Files that measure rates and latencies under a scaled-down quota (5,000 clients, a busy market): they run after
 * the rest, alone, since a deploy or a browser on the other core starves the local Lambda workers they time.
 */
const runAlone = ['test/realtime/quota.test.ts', 'test/realtime/outside-throttle.test.ts'];

const shared = {
  // Each file runs in its own process: the handlers' configuration and pool are per process, as in Lambda.
  pool: 'forks' as const,
  testTimeout: 30_000,
  hookTimeout: 120_000,
};

/** The stack tests copy one initdb's cluster instead of each running its own. */
const withStack = { ...shared, globalSetup: ['test/support/global-setup.ts'] };

export default defineConfig({
  test: {
    projects: [
      {
        // First, so that a broken unit fails the run within a minute, before any stack starts.
        test: { ...shared, name: 'unit', include: unit, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        test: {
          ...withStack,
          name: 'stack',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...unit, ...runAlone],
          // Two cores: each file runs its own PostgreSQL (and some a browser or a deploy), so more workers only contend.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: { ...withStack, name: 'alone', include: runAlone, maxWorkers: 1, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
