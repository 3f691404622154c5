import type { Queryable } from '../db';

/** How long the log keeps an event (EVENT_RETENTION_DAYS), and how many one statement deletes, so a cleanup never holds the log long. */
const retentionLimits = { defaultDays: 30, batch: 1_000 } as const;

/**
 * Deletes, from the log's start, events recorded before `cutoff`, a batch at
 * a time: only a prefix, so "the oldest position kept" is the log's first
 * (what a 410 names), and never an event a reorg can still retract (the
 * writer compares with those). It takes no lock the writer waits on: the
 * writer updates only open events, which this never deletes. Returns how many
 * went.
 */
export async function deleteExpiredEvents(db: Queryable, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rowCount } = await db.query(
      `DELETE FROM hatchery.events WHERE position IN (
         SELECT position FROM hatchery.events
         WHERE position < least(
           coalesce((SELECT min(position) FROM hatchery.events WHERE created_at >= $1), 9223372036854775807),
           coalesce((SELECT min(e.position) FROM hatchery.events e, hatchery.event_log l
                     WHERE e.block > l.final_block AND e.reverted_by IS NULL AND e.reverts IS NULL), 9223372036854775807))
         ORDER BY position LIMIT $2)`,
      [cutoff, retentionLimits.batch],
    );
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < retentionLimits.batch) return deleted;
  }
}
