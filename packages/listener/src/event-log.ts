import { appendDetectedEvents, type AppendOutcome } from '@hatchery/core/events/log-writer';
import { deleteExpiredEvents } from '@hatchery/core/events/retention';
import type { Logger } from '@hatchery/platform/telemetry/logger';
import { coalesce } from './coalesce';
import { sessionPool } from './leader-session';

export interface EventLogTiming {
  /** How long an event is kept (EVENT_RETENTION_DAYS). */
  retentionMs: number;
  /** How often expired events are deleted. */
  sweepMs: number;
  /** The longest time between two comparisons of the NFTs' owners when no notification names the table (a reorg's revert names none). */
  ownersMaxIntervalMs: number;
}

export interface EventLogKeeper {
  /** The indexer may have written (`nfts`: to that table): a pass runs (one more at most, however many ask while one runs). */
  changed(tables?: { nfts: boolean }): void;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The leading listener's term of keeping the event log (core/events/
 * log-writer.ts), on sessions of its own: the passes on one, so no hub event
 * waits behind them, and retention's deletes on another, so a long cleanup
 * never holds a pass back. A failed pass is logged and the next one compares
 * again from what the log holds: nothing is lost by it.
 */
export function keepEventLog(
  databaseUrl: string,
  options: { timing: EventLogTiming; log: Logger; written: (outcome: AppendOutcome | 'failed') => void },
): EventLogKeeper {
  const { timing, log, written } = options;
  const sessions = sessionPool(databaseUrl, '-events', { max: 2, idleTimeoutMillis: 0 }, log);
  let stopped = false;
  let ownersChanged = true;
  let ownersComparedAt = Number.NEGATIVE_INFINITY;

  const passes = coalesce(async () => {
    if (stopped) return;
    const owners = ownersChanged || performance.now() - ownersComparedAt >= timing.ownersMaxIntervalMs;
    // Cleared before the pass reads: a notification from here on may name a change its snapshot misses.
    ownersChanged = false;
    try {
      const client = await sessions.connect();
      try {
        written(await appendDetectedEvents(client, { owners }));
        if (owners) ownersComparedAt = performance.now();
      } finally {
        client.release();
      }
    } catch (error) {
      ownersChanged ||= owners;
      written('failed');
      log.warn({ err: error }, 'the event log could not be written; the next pass compares again');
    }
  });

  const sweeps = coalesce(async () => {
    if (stopped) return;
    try {
      const deleted = await deleteExpiredEvents(sessions, new Date(Date.now() - timing.retentionMs));
      if (deleted) log.info({ deleted }, 'expired events deleted from the event log');
    } catch (error) {
      log.warn({ err: error }, 'expired events could not be deleted; trying again later');
    }
  });
  const sweeper = setInterval(() => sweeps.trigger(), timing.sweepMs);
  sweeps.trigger();

  return {
    changed(tables = { nfts: true }) {
      if (tables.nfts) ownersChanged = true;
      passes.trigger();
    },
    idle: async () => {
      await passes.idle();
      await sweeps.idle();
    },
    async stop() {
      stopped = true;
      clearInterval(sweeper);
      await passes.idle();
      await sweeps.idle();
      await sessions.end().catch(() => undefined);
    },
  };
}
