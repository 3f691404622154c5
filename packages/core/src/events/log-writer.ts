import type { Queryable } from '../db';
import { readFreshness } from '../indexer/freshness-read';
import { indexerTable } from '../indexer/names';
import { revertedSuffix, zeroAddress, type EventType } from './catalogue';
import { ascending } from './replay';
import { detectAbove, detectOwnerChanges, highestBlock, type Candidate, type Detected, type OpenEvent } from './detection';

/**
 * The event log's one writer (docs/webhooks.md): a pass compares what the
 * indexer's tables hold above the final block with the log's open events,
 * and appends, in one transaction, each new event and a `<type>.reverted`
 * for each event whose rows a reorg removed. The log is its own detection
 * state: a pass after a restart or a takeover compares with what the last
 * one committed, so no event is written twice and none is skipped. The
 * state row (hatchery.event_log) is locked for the pass, so two writers
 * never interleave, and positions are its counter plus one: no holes.
 */

export interface AppendOutcome {
  /** The log had no state: this pass placed its start at the indexer's newest block (what came before is history, not events). */
  started: boolean;
  appended: number;
  reverted: number;
  lastPosition: number;
  /** Rows at or below it never change: the next pass compares only above. */
  finalBlock: string;
}

interface NewEvent extends Candidate {
  reverts?: OpenEvent;
}

/** Within a block, the order things happen in: listed, sold, closed, the NFT handed over; a fulfilment stands alone. */
const orderInBlock = ['listing.opened', 'sale.completed', 'listing.closed', 'nft.transferred', 'forge.fulfilled'] as const satisfies readonly EventType[];
const identity = (event: Candidate) => `${event.type}|${event.entity}|${event.block}`;
const byBlockThenType = (a: Candidate, b: Candidate) =>
  a.block === b.block
    ? orderInBlock.indexOf(a.type) - orderInBlock.indexOf(b.type) || (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0)
    : BigInt(a.block) < BigInt(b.block)
      ? -1
      : 1;

/**
 * A listing event no longer among the rows is retracted only if a reorg took
 * it: the listings table keeps one row per token, so a listing that closed
 * and opened again is superseded, not reverted.
 */
function supersededListing(event: OpenEvent, detected: Detected): boolean {
  const now = detected.listings.get(String(event.payload.tokenId));
  return now !== undefined && BigInt(now.listedAtBlock) > BigInt(String(event.payload.listedAtBlock));
}

/** The close a superseded listing never showed (it closed and was listed again between two passes): sold if a sale of the token falls between. */
function closeOfSuperseded(opened: OpenEvent, detected: Detected): Candidate {
  const tokenId = String(opened.payload.tokenId);
  const now = detected.listings.get(tokenId);
  const relistedAt = now ? BigInt(now.listedAtBlock) : BigInt(opened.block);
  const sale = detected.salesByToken.get(tokenId)?.find((block) => BigInt(block) >= BigInt(opened.block) && BigInt(block) <= relistedAt);
  return {
    type: 'listing.closed',
    entity: opened.entity,
    block: sale ?? relistedAt.toString(),
    wallets: opened.wallets,
    payload: {
      tokenId,
      seller: String(opened.payload.seller),
      price: String(opened.payload.price),
      status: sale ? 'Sold' : 'Cancelled',
      listedAtBlock: String(opened.payload.listedAtBlock),
    },
  };
}

/** What the rows say against what the log holds open, for every type read from a table with a block column. */
function compareWithOpen(detected: Detected, open: readonly OpenEvent[]): { fresh: Candidate[]; retracted: OpenEvent[] } {
  const fresh: Candidate[] = [];
  const retracted: OpenEvent[] = [];
  const openKeys = new Set(open.map(identity));
  for (const [type, candidates] of detected.candidates) {
    const shouldKeys = new Set(candidates.map(identity));
    fresh.push(...candidates.filter((candidate) => !openKeys.has(identity(candidate))));
    for (const event of open) {
      if (event.type !== type || shouldKeys.has(identity(event))) continue;
      if ((type === 'listing.opened' || type === 'listing.closed') && supersededListing(event, detected)) continue;
      retracted.push(event);
    }
  }
  // A superseded listing's close, once: unless the log or this pass already has one for it.
  const closes = new Set([...open, ...fresh].filter((event) => event.type === 'listing.closed').map((event) => event.entity));
  for (const event of open)
    if (event.type === 'listing.opened' && detected.candidates.has('listing.closed') && !closes.has(event.entity) && supersededListing(event, detected))
      fresh.push(closeOfSuperseded(event, detected));
  return { fresh, retracted };
}

/**
 * An owner change is a transfer, unless it hands the NFT back to the owner
 * before one of its open transfers: then those transfers, newest first, are
 * retracted (a reorg undid them, or a transfer back before they were final,
 * which leaves the same owner once final).
 */
function compareOwners(
  changes: readonly { tokenId: string; from: string; to: string }[],
  open: readonly OpenEvent[],
  block: string,
): { fresh: Candidate[]; retracted: OpenEvent[] } {
  const fresh: Candidate[] = [];
  const retracted: OpenEvent[] = [];
  for (const change of changes) {
    const transfers = open.filter((event) => event.type === 'nft.transferred' && event.entity === change.tokenId).sort((a, b) => b.position - a.position);
    const undoneTo = transfers.findIndex((event) => event.payload.from === change.to);
    if (undoneTo >= 0) {
      retracted.push(...transfers.slice(0, undoneTo + 1));
      continue;
    }
    fresh.push({
      type: 'nft.transferred',
      entity: change.tokenId,
      block,
      wallets: [change.from, change.to].filter((wallet, index, all) => wallet !== zeroAddress && all.indexOf(wallet) === index),
      payload: { tokenId: change.tokenId, from: change.from, to: change.to },
    });
  }
  return { fresh, retracted };
}

type StateRow = { lastPosition: string; finalBlock: string };
type OpenRow = { position: string; type: EventType; entity: string; block: string; wallets: string[]; payload: Record<string, string | number> };

/**
 * One pass: reads, compares and appends in one transaction on `session` (a client of its own, not a pool). `owners`:
 * compare the NFTs' owners too, a scan of the whole nfts table, so the caller asks for it when the table changed (a
 * pass that makes an open transfer final compares them whatever it is asked).
 */
export async function appendDetectedEvents(session: Queryable, { owners = true }: { owners?: boolean } = {}): Promise<AppendOutcome> {
  await session.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    const outcome = await pass(session, owners);
    await session.query('COMMIT');
    return outcome;
  } catch (error) {
    await session.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

async function pass(session: Queryable, compareOwnersNow: boolean): Promise<AppendOutcome> {
  const { rows: states } = await session.query<StateRow>(
    'SELECT last_position::text AS "lastPosition", final_block::text AS "finalBlock" FROM hatchery.event_log FOR UPDATE',
  );
  // Ponder's tables may be missing, which fails the statement: a savepoint keeps the pass's transaction usable.
  await session.query('SAVEPOINT freshness');
  const freshness = await readFreshness(session);
  await session.query('ROLLBACK TO SAVEPOINT freshness');
  const chains = freshness === 'unknown' ? [] : freshness.chains;
  const chainId = chains.length === 1 ? chains[0]!.chainId : null;
  const finalized = ascending(chains.map((chain) => BigInt(chain.finalizedBlock)))[0];
  const head = ascending(chains.map((chain) => BigInt(chain.block))).at(-1);

  const state = states[0];
  if (!state) {
    const highest = BigInt(await highestBlock(session));
    const start = (head !== undefined && head > highest ? head : highest).toString();
    await seedOwners(session);
    await session.query('INSERT INTO hatchery.event_log (last_position, final_block) VALUES (0, $1::numeric)', [start]);
    return { started: true, appended: 0, reverted: 0, lastPosition: 0, finalBlock: start };
  }

  const finalBlock = state.finalBlock;
  const detected = await detectAbove(session, finalBlock);
  const { rows: openRows } = await session.query<OpenRow>(
    `SELECT position::text AS position, type, entity, block::text AS block, wallets, payload FROM hatchery.events
     WHERE block > $1::numeric AND reverted_by IS NULL AND reverts IS NULL ORDER BY events.position`,
    [finalBlock],
  );
  const open: OpenEvent[] = openRows.map((row) => ({ ...row, position: Number(row.position) }));
  const rows = compareWithOpen(detected, open);
  const nextFinal = finalized !== undefined && finalized > BigInt(finalBlock) ? finalized.toString() : finalBlock;
  // Once final, an event is compared no more: a transfer this pass makes final is checked against the owners first,
  // whatever asked for the pass (a reorg's revert notifies nothing, and may have undone it).
  const sealsTransfer = open.some((event) => event.type === 'nft.transferred' && BigInt(event.block) <= BigInt(nextFinal));
  const changes = compareOwnersNow || sealsTransfer ? await detectOwnerChanges(session) : undefined;
  const blockOfChanges = (head ?? BigInt(await highestBlock(session))).toString();
  const owners = changes ? compareOwners(changes, open, blockOfChanges) : { fresh: [], retracted: [] };

  const retracted = [...rows.retracted, ...owners.retracted].sort((a, b) => b.position - a.position);
  const appended: NewEvent[] = [
    ...retracted.map((event) => ({ ...event, type: event.type, reverts: event })),
    ...[...rows.fresh, ...owners.fresh].sort(byBlockThenType),
  ];
  let lastPosition = Number(state.lastPosition);
  if (appended.length) {
    const first = lastPosition + 1;
    lastPosition += appended.length;
    await session.query(
      `INSERT INTO hatchery.events (position, type, chain_id, block, entity, wallets, payload, reverts)
       SELECT $1::bigint + e.ordinality - 1, e.value->>'type', $2::bigint, (e.value->>'block')::numeric, e.value->>'entity',
         ARRAY(SELECT jsonb_array_elements_text(e.value->'wallets')), e.value->'payload', (e.value->>'reverts')::bigint
       FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(value, ordinality)`,
      [
        first,
        chainId,
        JSON.stringify(
          appended.map((event) => ({
            type: event.reverts ? `${event.type}${revertedSuffix}` : event.type,
            block: event.block,
            entity: event.entity,
            wallets: event.wallets,
            payload: event.payload,
            reverts: event.reverts?.position ?? null,
          })),
        ),
      ],
    );
    await session.query(
      `UPDATE hatchery.events o SET reverted_by = r.position FROM hatchery.events r
       WHERE r.position BETWEEN $1 AND $2 AND r.reverts = o.position`,
      [first, lastPosition],
    );
  }
  if (changes?.length) await storeOwners(session, changes);
  await session.query('UPDATE hatchery.event_log SET last_position = $1, final_block = $2::numeric, updated_at = now()', [lastPosition, nextFinal]);
  return { started: false, appended: appended.length - retracted.length, reverted: retracted.length, lastPosition, finalBlock: nextFinal };
}

/** The owners when the log starts: later changes to them are transfers. */
async function seedOwners(session: Queryable): Promise<void> {
  const { rows } = await session.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [indexerTable('nfts')]);
  if (!rows[0]?.exists) return;
  await session.query(
    `INSERT INTO hatchery.event_nft_owners (token_id, owner) SELECT token_id, lower(owner) FROM ${indexerTable('nfts')} WHERE NOT burned
     ON CONFLICT (token_id) DO UPDATE SET owner = excluded.owner`,
  );
}

async function storeOwners(session: Queryable, changes: readonly { tokenId: string; to: string }[]): Promise<void> {
  const held = changes.filter((change) => change.to !== zeroAddress);
  const gone = changes.filter((change) => change.to === zeroAddress).map((change) => change.tokenId);
  if (held.length)
    await session.query(
      `INSERT INTO hatchery.event_nft_owners (token_id, owner) SELECT token_id::numeric, owner FROM unnest($1::text[], $2::text[]) AS u(token_id, owner)
       ON CONFLICT (token_id) DO UPDATE SET owner = excluded.owner`,
      [held.map((change) => change.tokenId), held.map((change) => change.to)],
    );
  if (gone.length) await session.query('DELETE FROM hatchery.event_nft_owners WHERE token_id = ANY($1::numeric[])', [gone]);
}
