import { defineConfig } from 'vitest/config';

/*
 * One project per kind of test, each a folder of test/ (README.md, Layout). A file's kind is where it lives: no
 * project names a file.
 */

const shared = {
  // Each file runs in its own process: the handlers' configuration and pool are per process, as in Lambda.
  pool: 'forks' as const,
  testTimeout: 30_000,
  hookTimeout: 120_000,
};

/** The stack tests copy one initdb's cluster instead of each running its own. */
const withStack = { ...shared, globalSetup: ['test/support/global-setup.ts'] };

/** Two cores: each file of these runs its own PostgreSQL (and some a browser or a deploy), so more workers only contend. */
const maxWorkers = 2;

export default defineConfig({
  test: {
    projects: [
      // First, so that a broken rule fails the run within a minute, before any stack starts.
      // A worker thread per file: as isolated as a process for modules, and quicker to start; no unit test runs a handler's pool.
      { test: { ...shared, pool: 'threads', name: 'unit', include: ['test/unit/**/*.test.ts'], maxWorkers, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'network', include: ['test/network/**/*.test.ts'], maxWorkers, sequence: { groupOrder: 1 } } },
      { test: { ...shared, name: 'package', include: ['test/package/**/*.test.ts'], maxWorkers, sequence: { groupOrder: 1 } } },
      {
        test: {
          ...withStack,
          name: 'stack',
          include: ['test/stack/**/*.test.ts', 'test/deploy/**/*.test.ts', 'test/browser/**/*.test.ts', 'test/bench/**/*.test.ts'],
          maxWorkers,
          sequence: { groupOrder: 2 },
        },
      },
      // Rates and latencies under a scaled-down quota (5,000 clients, a busy market): after the rest, alone, since a
      // deploy or a browser on the other core starves the local Lambda workers they time.
      { test: { ...withStack, name: 'load', include: ['test/load/**/*.test.ts'], maxWorkers: 1, sequence: { groupOrder: 3 } } },
    ],
  },
});
