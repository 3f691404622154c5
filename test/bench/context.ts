import { loadavg } from 'node:os';
import type pg from 'pg';
import type { RunningStack } from '@hatchery/local/stack';

/** What every benchmark section gets: the running stack on the bench dataset, and a pool for raw-SQL baselines. */
export interface BenchContext {
  stack: RunningStack;
  /** A pool as large as the concurrency, for baselines at equal concurrency. */
  sql: pg.Pool;
  concurrency: number;
  durationMs: number;
}

export type BenchSection = (context: BenchContext) => Promise<void>;

/** The one-minute load average now, printed beside each figure: a figure taken on a busy machine says so. Taken before a section starts, as the section's own work raises it. */
export const loadAverage = (): string => loadavg()[0]!.toFixed(2);
