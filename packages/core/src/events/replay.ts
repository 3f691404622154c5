import { AppError, validationError } from '../errors';
import type { Queryable } from '../db';
import type { Freshness } from '../indexer/freshness';
import { revertedSuffix, type AnyEventType, type Finality } from './catalogue';

/**
 * Reading the event log from a position (docs/webhooks.md, "Replay"): the
 * reads of GET /events, the webhooks' dispatch and the hub's client share it.
 * At `safe` or `finalized` a page is a prefix of the log that the indexer's
 * block covers: it stops before the first event still open to a reorg, so a
 * reader that moves on by `nextCursor` never passes one it has not seen, and
 * never sees one that a reorg retracts.
 */

export interface LoggedEvent {
  id: string;
  position: number;
  type: AnyEventType;
  chainId: number | null;
  blockNumber: string;
  entity: string;
  wallets: string[];
  createdAt: string;
  payload: Record<string, string | number>;
  reverts?: { id: string; position: number };
}

interface EventPage {
  items: LoggedEvent[];
  nextCursor: string;
  hasMore: boolean;
}

export interface EventQuery {
  /** The position read after; undefined: from the oldest event kept. */
  after?: number;
  /** Each declared type asked for brings its `.reverted` at `latest`. */
  types?: readonly string[];
  wallet?: string;
  finality: Finality;
  limit: number;
}

/** Block numbers, lowest first (Math's min and max take no bigint). */
export const ascending = (blocks: readonly bigint[]): bigint[] => [...blocks].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const eventId = (position: number) => `evt_${position}`;

const cursorPrefix = 'p';

/** Opaque to readers; a position underneath, so one cursor serves every filter and finality. */
export const eventCursor = (position: number): string => Buffer.from(`${cursorPrefix}${position}`).toString('base64url');

/** The position a cursor names; a malformed one is a 422 naming `after`. */
export function positionOf(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const decoded = /^[A-Za-z0-9_-]{1,40}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const match = /^p(0|[1-9][0-9]{0,15})$/.exec(decoded);
  if (!match) throw validationError('after', 'Not a cursor of this log: use the nextCursor of an earlier page.');
  return Number(match[1]);
}

/** The block a finality covers, the lowest over the indexer's chains; undefined when the indexer says nothing of it. */
export function coveredBlock(freshness: Freshness, finality: Exclude<Finality, 'latest'>): string | undefined {
  if (freshness === 'unknown') return undefined;
  return ascending(freshness.chains.map((chain) => BigInt(finality === 'safe' ? chain.safeBlock : chain.finalizedBlock)))[0]?.toString();
}

type Row = {
  position: string;
  type: AnyEventType;
  chainId: string | null;
  block: string;
  entity: string;
  wallets: string[];
  createdAt: Date;
  payload: Record<string, string | number>;
  reverts: string | null;
};

/**
 * A page of the log after `query.after`, at its finality (`covered`: the
 * block it covers; undefined at `latest`). A position before the oldest kept
 * is a 410 that names the oldest. A finality covers no further than the
 * log's final block either: above it, the writer has not yet compared the
 * rows with a finalized block that covers them, so a reorg's revert may
 * still have an event there to retract.
 */
export async function readEvents(db: Queryable, query: EventQuery, covered: string | undefined): Promise<EventPage> {
  const types = query.types?.length ? (query.finality === 'latest' ? query.types.flatMap((type) => [type, `${type}${revertedSuffix}`]) : query.types) : null;
  const atFinality = query.finality !== 'latest';
  // Unknown finality covers nothing: no block is known safe.
  const coveredBlock = atFinality ? (covered ?? '-1') : null;
  const { rows: bounds } = await db.query<{ last: string | null; oldest: string | null; upper: string | null }>(
    `SELECT (SELECT last_position FROM hatchery.event_log)::text AS last,
       (SELECT min(position) FROM hatchery.events)::text AS oldest,
       CASE WHEN $1::numeric IS NULL THEN (SELECT last_position FROM hatchery.event_log)
         ELSE coalesce((SELECT min(position) - 1 FROM hatchery.events
                        WHERE block > least($1::numeric, (SELECT final_block FROM hatchery.event_log)) AND reverted_by IS NULL AND reverts IS NULL),
                       (SELECT last_position FROM hatchery.event_log)) END::text AS upper`,
    [coveredBlock],
  );
  const last = Number(bounds[0]?.last ?? 0);
  const oldest = bounds[0]?.oldest === null || bounds[0]?.oldest === undefined ? last + 1 : Number(bounds[0].oldest);
  const after = query.after ?? oldest - 1;
  if (after > last) throw validationError('after', 'Not a cursor of this log: it names a position past its end.');
  if (after + 1 < oldest)
    throw new AppError('gone', `Events up to position ${oldest - 1} are no longer kept; read on from the oldest one kept.`, undefined, undefined, {
      oldestPosition: String(oldest),
      oldestCursor: eventCursor(oldest - 1),
    });
  const upper = Number(bounds[0]?.upper ?? last);
  if (after >= upper) return { items: [], nextCursor: eventCursor(after), hasMore: false };

  const { rows } = await db.query<Row>(
    `SELECT position::text AS position, type, chain_id::text AS "chainId", block::text AS block, entity, wallets, created_at AS "createdAt", payload,
       reverts::text AS reverts
     FROM hatchery.events
     WHERE position > $1 AND position <= $2
       AND ($3::text[] IS NULL OR type = ANY($3::text[]))
       AND ($4::text IS NULL OR wallets @> ARRAY[$4::text])
       AND (NOT $5::boolean OR (reverted_by IS NULL AND reverts IS NULL))
     ORDER BY events.position LIMIT $6`,
    [after, upper, types, query.wallet?.toLowerCase() ?? null, atFinality, query.limit],
  );
  const items = rows.map(toEvent);
  const full = items.length === query.limit;
  const through = full ? items.at(-1)!.position : upper;
  return { items, nextCursor: eventCursor(through), hasMore: through < upper };
}

function toEvent(row: Row): LoggedEvent {
  const position = Number(row.position);
  return {
    id: eventId(position),
    position,
    type: row.type,
    chainId: row.chainId === null ? null : Number(row.chainId),
    blockNumber: row.block,
    entity: row.entity,
    wallets: row.wallets,
    createdAt: row.createdAt.toISOString(),
    payload: row.payload,
    ...(row.reverts !== null && { reverts: { id: eventId(Number(row.reverts)), position: Number(row.reverts) } }),
  };
}
