import type { Queryable } from '../db';
import { indexerTable } from '../indexer/names';
import { zeroAddress, type EventType } from './catalogue';

/**
 * What the indexer's tables say happened above a block: the candidates the
 * log writer (events/log-writer.ts) compares with the events it holds. Rows
 * at or below the final block never change (a reorg reverts only above it),
 * so each read is bounded by it and by the indexer's own indexes.
 */

/** An event as detected: its identity is its type, entity and block. */
export interface Candidate {
  type: EventType;
  entity: string;
  block: string;
  wallets: string[];
  payload: Record<string, string | number>;
}

/** An open event of the log: detected above the final block, and not retracted. */
export interface OpenEvent extends Candidate {
  position: number;
}

/** A listing's row now: what tells a listing closed and opened again from one a reorg removed. */
interface ListingNow {
  listedAtBlock: string;
  status: string;
}

export interface Detected {
  /** By type; a type whose table does not exist yet is left out (nothing of it is new, nothing reverted). */
  candidates: Map<EventType, Candidate[]>;
  /** The current row of every token whose listing changed above the final block. */
  listings: Map<string, ListingNow>;
  /** Sales above the final block, by token: a listing that closed and opened again between two reads closed by a sale if one of these falls between. */
  salesByToken: Map<string, string[]>;
}

/** Without a value for an optional field the payload leaves it out, as the lists do. */
function compact(payload: Record<string, string | number | null>): Record<string, string | number> {
  return Object.fromEntries(Object.entries(payload).filter((entry): entry is [string, string | number] => entry[1] !== null));
}

/**
 * A read of an indexer table that may not exist yet, asked first rather than caught: the reads run in the log
 * writer's transaction, which a failed statement would abort.
 */
async function ifExists<T>(db: Queryable, table: string, read: () => Promise<T[]>): Promise<T[] | undefined> {
  const { rows } = await db.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [indexerTable(table)]);
  return rows[0]?.exists ? read() : undefined;
}

const entityOfListing = (tokenId: string, listedAtBlock: string) => `${tokenId}@${listedAtBlock}`;

/** The candidates of every type whose rows live in a table with a block column, above `finalBlock`. */
export async function detectAbove(db: Queryable, finalBlock: string): Promise<Detected> {
  const candidates = new Map<EventType, Candidate[]>();
  const listings = new Map<string, ListingNow>();
  const salesByToken = new Map<string, string[]>();

  const forge = await ifExists(db, 'forge_requests', async () => {
    const { rows } = await db.query<{ requestId: string; buyer: string; tier: number; tokenId: string | null; editionId: string | null; block: string }>(
      `SELECT request_id::text AS "requestId", lower(buyer) AS buyer, tier, token_id::text AS "tokenId", edition_id::text AS "editionId",
         fulfilled_at_block::text AS block
       FROM ${indexerTable('forge_requests')} WHERE status = 'Fulfilled' AND fulfilled_at_block > $1::numeric`,
      [finalBlock],
    );
    return rows;
  });
  if (forge)
    candidates.set(
      'forge.fulfilled',
      forge.map((row) => ({
        type: 'forge.fulfilled',
        entity: row.requestId,
        block: row.block,
        wallets: [row.buyer],
        payload: compact({ requestId: row.requestId, buyer: row.buyer, tier: row.tier, tokenId: row.tokenId, editionId: row.editionId }),
      })),
    );

  const sales = await ifExists(db, 'sales', async () => {
    const { rows } = await db.query<{
      id: string;
      tokenId: string;
      seller: string;
      buyer: string;
      price: string;
      platformFee: string;
      royalty: string;
      block: string;
    }>(
      `SELECT id, token_id::text AS "tokenId", lower(seller) AS seller, lower(buyer) AS buyer, price::text AS price,
         platform_fee::text AS "platformFee", royalty::text AS royalty, block_number::text AS block
       FROM ${indexerTable('sales')} WHERE block_number > $1::numeric`,
      [finalBlock],
    );
    return rows;
  });
  if (sales) {
    candidates.set(
      'sale.completed',
      sales.map((row) => ({
        type: 'sale.completed',
        entity: row.id,
        block: row.block,
        wallets: [...new Set([row.seller, row.buyer])],
        payload: {
          saleId: row.id,
          tokenId: row.tokenId,
          seller: row.seller,
          buyer: row.buyer,
          price: row.price,
          platformFee: row.platformFee,
          royalty: row.royalty,
        },
      })),
    );
    for (const sale of sales) salesByToken.set(sale.tokenId, [...(salesByToken.get(sale.tokenId) ?? []), sale.block]);
  }

  const listed = await ifExists(db, 'listings', async () => {
    const { rows } = await db.query<{
      tokenId: string;
      seller: string;
      price: string;
      status: string;
      editionId: string | null;
      listedAt: string;
      updatedAt: string;
    }>(
      `SELECT token_id::text AS "tokenId", lower(seller) AS seller, price::text AS price, status, edition_id::text AS "editionId",
         listed_at_block::text AS "listedAt", updated_at_block::text AS "updatedAt"
       FROM ${indexerTable('listings')} WHERE updated_at_block > $1::numeric`,
      [finalBlock],
    );
    return rows;
  });
  if (listed) {
    const opened: Candidate[] = [];
    const closed: Candidate[] = [];
    for (const row of listed) {
      listings.set(row.tokenId, { listedAtBlock: row.listedAt, status: row.status });
      const entity = entityOfListing(row.tokenId, row.listedAt);
      if (BigInt(row.listedAt) > BigInt(finalBlock))
        opened.push({
          type: 'listing.opened',
          entity,
          block: row.listedAt,
          wallets: [row.seller],
          payload: compact({ tokenId: row.tokenId, seller: row.seller, price: row.price, editionId: row.editionId, listedAtBlock: row.listedAt }),
        });
      if (row.status !== 'Active')
        closed.push({
          type: 'listing.closed',
          entity,
          block: row.updatedAt,
          wallets: [row.seller],
          payload: { tokenId: row.tokenId, seller: row.seller, price: row.price, status: row.status, listedAtBlock: row.listedAt },
        });
    }
    candidates.set('listing.opened', opened);
    candidates.set('listing.closed', closed);
  }
  return { candidates, listings, salesByToken };
}

/** An NFT whose owner the indexer holds differently from the owner the log last reported (the zero address: none). */
interface OwnerChange {
  tokenId: string;
  from: string;
  to: string;
}

/**
 * The nfts table has no block column, so owners are compared with the log's
 * own copy of them (hatchery.event_nft_owners): a burned or missing NFT is
 * owned by the zero address. Undefined while the table does not exist.
 */
export async function detectOwnerChanges(db: Queryable): Promise<OwnerChange[] | undefined> {
  return ifExists(db, 'nfts', async () => {
    const { rows } = await db.query<OwnerChange>(
      `SELECT coalesce(n.token_id, o.token_id)::text AS "tokenId", coalesce(o.owner, $1) AS "from",
         CASE WHEN n.token_id IS NULL OR n.burned THEN $1 ELSE lower(n.owner) END AS "to"
       FROM ${indexerTable('nfts')} n FULL JOIN hatchery.event_nft_owners o ON o.token_id = n.token_id
       WHERE coalesce(o.owner, $1) IS DISTINCT FROM (CASE WHEN n.token_id IS NULL OR n.burned THEN $1 ELSE lower(n.owner) END)
       ORDER BY 1`,
      [zeroAddress],
    );
    return rows;
  });
}

/** The highest block any event-bearing table holds: where the log starts when it has no state (history is not events). */
export async function highestBlock(db: Queryable): Promise<string> {
  const reads = [
    ['forge_requests', 'fulfilled_at_block'],
    ['sales', 'block_number'],
    ['listings', 'updated_at_block'],
  ] as const;
  let highest = 0n;
  for (const [table, column] of reads) {
    const rows = await ifExists(
      db,
      table,
      async () => (await db.query<{ block: string | null }>(`SELECT max(${column})::text AS block FROM ${indexerTable(table)}`)).rows,
    );
    const block = rows?.[0]?.block;
    if (block && BigInt(block) > highest) highest = BigInt(block);
  }
  return highest.toString();
}
