import { isMissingRelation, type Queryable } from '../db';
import { indexerAddress, indexerTable } from '../indexer/names';
import type { ForgeFulfilled, MarketChanged } from './events';
import { summaryTables } from '../indexer/summary-store';

/**
 * What the listener reads from the indexer schema to detect events
 * (docs/realtime.md). A missing table (42P01) is never an error: the
 * indexer may not have created it yet.
 */

/** What marketChanged reports of the listings; the event adds its version. */
export type Listings = Omit<MarketChanged, 'version'>;

export type ListingsSnapshot = Listings | 'absent';

/** The reads a notification calls for; `summary`, a new sum of the transparency summary's row. */
interface TablesToRead {
  listings: boolean;
  forgeRequests: boolean;
  /** Owners, which the event log compares whole (events/detection.ts): only when named, or now and then. */
  nfts: boolean;
  summary: boolean;
}

const everything: TablesToRead = { listings: true, forgeRequests: true, nfts: true, summary: true };

/**
 * Ponder NOTIFYs once per block it indexes live with the JSON list of the
 * tables that block changed (often `[]`; a long list comes in several
 * NOTIFYs; with `ordering: "isolated"` a table is named per chain,
 * `listings_8453`). Each read depends on one table, so a list says which to
 * do. Any other payload (a plain NOTIFY, simulate, another writer) reads both.
 */
export function tablesToRead(payload: string | undefined): TablesToRead {
  let names: unknown;
  try {
    names = JSON.parse(payload ?? '');
  } catch {
    return everything;
  }
  if (!Array.isArray(names) || !names.every((name): name is string => typeof name === 'string')) return everything;
  const listed = names;
  const partition = /^_\d+$/;
  const changed = (table: string) => listed.some((name) => name === table || (name.startsWith(table) && partition.test(name.slice(table.length))));
  return { listings: changed('listings'), forgeRequests: changed('forge_requests'), nfts: changed('nfts'), summary: summaryTables.some(changed) };
}

/**
 * The next marketChanged's version, from a sequence of the service's own
 * (migrations): it grows across restarts and takeovers, where block numbers
 * may not (a reorg lowers maxBlock).
 */
export async function nextMarketVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ version: string }>(`SELECT nextval('hatchery.market_version') AS version`);
  return Number(rows[0]?.version);
}

/** Forge requests fulfilled at `block`, already reported: the fulfilment cursor. */
export interface ForgeCursor {
  block: string;
  seen: string[];
}

export interface Fulfilment extends Omit<ForgeFulfilled, 'sequence'> {
  block: string;
}

/**
 * `count` is the active listings, `maxBlock` the highest `updated_at_block`
 * over all listings, whatever their status: a sale or a cancellation moves it
 * on. A reorg can lower it (Ponder reverts the rows), so events are ordered
 * by their version, not by it. Both are served by the (status, updated_at_block) index the
 * indexer creates: the count by its `Active` range, the maximum by a skip
 * scan that takes the highest block of each status in turn.
 */
export async function readListingsSnapshot(db: Queryable): Promise<ListingsSnapshot> {
  const listings = indexerTable('listings');
  try {
    const { rows } = await db.query<{ count: number; maxBlock: string }>(
      `WITH RECURSIVE statuses AS (
         SELECT min(status) AS status FROM ${listings}
         UNION ALL
         SELECT (SELECT min(status) FROM ${listings} WHERE status > statuses.status) FROM statuses WHERE statuses.status IS NOT NULL
       )
       SELECT (SELECT count(*)::int FROM ${listings} WHERE status = 'Active') AS count,
              coalesce(max((SELECT max(updated_at_block) FROM ${listings} WHERE status = statuses.status)), 0)::text AS "maxBlock"
       FROM statuses WHERE statuses.status IS NOT NULL`,
    );
    return { count: rows[0]?.count ?? 0, maxBlock: rows[0]?.maxBlock ?? '0' };
  } catch (error) {
    if (isMissingRelation(error)) return 'absent';
    throw error;
  }
}

const emptyListings: Listings = { count: 0, maxBlock: '0' };

/**
 * The marketChanged a new snapshot calls for, if any. Without a previous one
 * (the first read since the listener started or took over) it is the snapshot
 * itself, so clients resync after a deploy or a failover. A missing table
 * sends nothing and counts as no listings, which is what the listings
 * endpoint answers for it, so a table appearing empty is no change either.
 */
export function marketChange(previous: ListingsSnapshot | undefined, next: ListingsSnapshot): Listings | undefined {
  if (next === 'absent') return undefined;
  if (previous === undefined) return next;
  const before = previous === 'absent' ? emptyListings : previous;
  return before.count === next.count && before.maxBlock === next.maxBlock ? undefined : next;
}

type FulfilmentRow = { requestId: string; buyer: string; tokenId: string | null; editionId: string | null; block: string };

const fulfilmentColumns = `request_id::text AS "requestId", buyer, token_id::text AS "tokenId", edition_id::text AS "editionId",
  fulfilled_at_block::text AS block`;

const toFulfilment = (row: FulfilmentRow): Fulfilment => ({
  requestId: row.requestId,
  buyer: indexerAddress(row.buyer),
  block: row.block,
  ...(row.tokenId !== null && { tokenId: row.tokenId }),
  ...(row.editionId !== null && { editionId: row.editionId }),
});

/**
 * Folds the fulfilments read at or after the cursor's block into the cursor.
 * Reading from the cursor's block itself (not after it) is what catches a
 * fulfilment committed later in a block already seen; `seen` keeps those
 * already reported from being reported twice.
 */
export function advanceCursor(cursor: ForgeCursor, rows: readonly Fulfilment[]): { cursor: ForgeCursor; fresh: Fulfilment[] } {
  const fresh = rows.filter((row) => !(row.block === cursor.block && cursor.seen.includes(row.requestId)));
  const last = rows.at(-1);
  if (!last) return { cursor, fresh };
  const block = BigInt(last.block) > BigInt(cursor.block) ? last.block : cursor.block;
  return { cursor: { block, seen: rows.filter((row) => row.block === block).map((row) => row.requestId) }, fresh };
}

/** The cursor for a table that does not exist yet: every fulfilment it comes to hold is new. */
const beforeAnyBlock: ForgeCursor = { block: '0', seen: [] };

/**
 * Newly fulfilled forge requests since the cursor, in block order. Without a
 * cursor (first read) it only places one at the newest fulfilment block:
 * fulfilments from before the listener started are history, not events.
 */
export async function readFulfilments(db: Queryable, cursor: ForgeCursor | undefined): Promise<{ cursor: ForgeCursor; fresh: Fulfilment[] }> {
  const forgeRequests = indexerTable('forge_requests');
  try {
    if (!cursor) {
      const { rows } = await db.query<FulfilmentRow>(
        `SELECT ${fulfilmentColumns} FROM ${forgeRequests}
         WHERE status = 'Fulfilled' AND fulfilled_at_block = (SELECT max(fulfilled_at_block) FROM ${forgeRequests} WHERE status = 'Fulfilled')`,
      );
      return { cursor: rows[0] ? { block: rows[0].block, seen: rows.map((row) => row.requestId) } : beforeAnyBlock, fresh: [] };
    }
    const { rows } = await db.query<FulfilmentRow>(
      `SELECT ${fulfilmentColumns} FROM ${forgeRequests}
       WHERE status = 'Fulfilled' AND fulfilled_at_block >= $1::numeric ORDER BY fulfilled_at_block, request_id`,
      [cursor.block],
    );
    return advanceCursor(cursor, rows.map(toFulfilment));
  } catch (error) {
    if (isMissingRelation(error)) return { cursor: cursor ?? beforeAnyBlock, fresh: [] };
    throw error;
  }
}
