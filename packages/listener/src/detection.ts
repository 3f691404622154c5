import type { Queryable } from '@hatchery/core/db';
import { marketChange, readFulfilments, readListingsSnapshot, type Fulfilment, type Listings } from '@hatchery/core/realtime/changes';
import type { Logger } from '@hatchery/platform/telemetry/logger';
import { latestOnly } from './coalesce';
import { resumeFrom, type DetectionState, type StateStore } from './state';

/** A failed-over listener resumes the saved forge cursor only when it is this fresh; older means the clients have given up (45 s). */
const stateMaxAgeMs = 10 * 60_000;
const stateHeartbeatMs = stateMaxAgeMs / 4;

/** More new fulfilments than this in one read is the indexer back-filling history, not events anyone waits for. */
const backfillFulfilments = 1_000;

/**
 * What the leading listener has seen (the listings snapshot and the forge
 * cursor), what is new since, and that state kept in the state store so a
 * listener that takes over carries on from it. Reads hand their events back
 * and advance the state only once the caller has sent them.
 */
export function changeDetection(store: StateStore, log: Logger) {
  let state: DetectionState | undefined;
  let savedAt = 0;
  /** The term's first market read sends marketChanged whatever came before, so clients resync. */
  let resync = false;
  // The state is written in a lane of its own, so a slow write never delays the next read (and its fulfilments).
  const saves = latestOnly(async (next: DetectionState) => {
    try {
      await store.save(next);
      savedAt = next.readAt;
    } catch (error) {
      log.warn({ err: error }, 'listener state could not be saved');
    }
  });
  const update = (next: DetectionState) => {
    const previous = state;
    state = next;
    const changed = JSON.stringify({ ...previous, readAt: 0 }) !== JSON.stringify({ ...next, readAt: 0 });
    if (changed || next.readAt - savedAt >= stateHeartbeatMs) saves.push(next);
  };

  return {
    /** A term begins: the saved state, or the one this process remembers, whichever is newer and fresh enough. */
    async begin(): Promise<void> {
      const saved = await store.load().catch((error: unknown) => log.warn({ err: error }, 'listener state could not be loaded'));
      state = resumeFrom(saved ?? undefined, state, Date.now(), stateMaxAgeMs);
      resync = true;
    },
    /** Fulfilments since the cursor, and `seen()` to move the cursor past them once they are sent. */
    async fulfilments(db: Queryable): Promise<{ fresh: Fulfilment[]; seen(): void }> {
      const forge = await readFulfilments(db, state?.cursor);
      const backfill = forge.fresh.length > backfillFulfilments;
      if (backfill) log.warn({ skipped: forge.fresh.length }, 'fulfilments back-filled by the indexer are not sent');
      return { fresh: backfill ? [] : forge.fresh, seen: () => update({ snapshot: state?.snapshot, cursor: forge.cursor, readAt: Date.now() }) };
    },
    /** The listings, if they changed since the last snapshot (or the term has not sent one yet). */
    async market(db: Queryable): Promise<Listings | undefined> {
      const snapshot = await readListingsSnapshot(db);
      const changed = marketChange(resync ? undefined : state?.snapshot, snapshot);
      resync = false;
      update({ snapshot, cursor: state?.cursor, readAt: Date.now() });
      return changed;
    },
    idle: () => saves.idle(),
  };
}
