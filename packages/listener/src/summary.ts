import { storeSummary } from '@hatchery/core/indexer/summary-store';
import type { Queryable } from '@hatchery/core/db';
import type { Logger } from '@hatchery/platform/telemetry/logger';
import { coalesce } from './coalesce';
import { sessionPool } from './leader-session';

export interface SummaryTiming {
  /** The least time between two sums while notifications name a summed table. */
  changedMs: number;
  /** The most time between two sums, whatever the notifications say. */
  maxIntervalMs: number;
}

/**
 * When the next sum is due (ms on the clock of `lastStartedAt`): at once when
 * none has run this term, `changedMs` after the last one began once a summed
 * table changed (or it failed), else `maxIntervalMs` after it. No
 * notification can vouch that nothing changed: a reorg's revert, a backfill
 * and a switch of Ponder's views name no table, hence the upper bound.
 */
export function nextSumAt(lastStartedAt: number | undefined, changed: boolean, timing: SummaryTiming): number {
  if (lastStartedAt === undefined) return Number.NEGATIVE_INFINITY;
  return lastStartedAt + (changed ? timing.changedMs : timing.maxIntervalMs);
}

export interface SummaryKeeper {
  /** A notification named a table the summary sums. */
  changed(): void;
  /** Resolves once no sum runs. */
  idle(): Promise<void>;
  /** No sum starts after this; resolves once the one running, if any, has ended. */
  stop(): Promise<void>;
}

/**
 * The leading listener's term of keeping the summary's row (core/indexer/
 * summary-store.ts) fresh, on a session of its own so that no event read waits
 * behind its scans. The first sum runs at once; a failure is logged and tried
 * again, never fatal.
 */
export function keepSummary(options: {
  session: Queryable;
  timing: SummaryTiming;
  log: Logger;
  /** Called after each attempt: whether it stored the row, or the failure. */
  summed: (outcome: 'stored' | 'nothing to store' | 'failed') => void;
  now?: () => number;
}): SummaryKeeper {
  const { session, timing, log, summed, now = () => performance.now() } = options;
  let startedAt: number | undefined;
  let changed = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const due = () => nextSumAt(startedAt, changed, timing);

  const schedule = () => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(() => runs.trigger(), Math.max(0, Math.ceil(due() - now())));
  };

  const runs = coalesce(async () => {
    if (stopped) return;
    // A timer may fire a little before `now` says it is due (it counts whole milliseconds, on a clock of its own).
    if (now() < due()) return schedule();
    // Cleared before the sum begins: a notification from here on may name a change its snapshot misses.
    changed = false;
    startedAt = now();
    try {
      summed((await storeSummary(session)) ? 'stored' : 'nothing to store');
    } catch (error) {
      // Tried again as soon as a change would be.
      changed = true;
      summed('failed');
      log.warn({ err: error }, 'the transparency summary could not be summed; trying again');
    }
    schedule();
  });

  schedule();
  return {
    changed() {
      if (changed) return;
      changed = true;
      schedule();
    },
    idle: () => runs.idle(),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await runs.idle();
    },
  };
}

/**
 * A term's summary on a session of its own: a pool of one that reconnects on
 * its next sum after a failure, which never ends the term (its sums are no
 * event's). Stopping the keeper ends the session.
 */
export function keepSummaryOnSession(databaseUrl: string, options: Omit<Parameters<typeof keepSummary>[0], 'session'>): SummaryKeeper {
  const session = sessionPool(databaseUrl, '-summary', { max: 1, idleTimeoutMillis: 0 }, options.log);
  const keeper = keepSummary({ ...options, session });
  return {
    ...keeper,
    async stop() {
      await keeper.stop();
      await session.end().catch(() => undefined);
    },
  };
}
