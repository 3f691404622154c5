import type pg from 'pg';
import { eventTypes, type EventType } from '@hatchery/core/events/catalogue';

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
export const wallMs = () => performance.timeOrigin + performance.now();

/** One of a thousand wallets the bench's events concern. */
export const benchWallet = (n: number) => `0x${'b'.repeat(8)}${(n % 1000).toString(16).padStart(32, '0')}`;

interface BenchEvent {
  type: EventType;
  entity: string;
  wallets: string[];
  payload: Record<string, string | number>;
}

/** The `n`th bench event: the declared types in turn, each with the payload its catalogue entry declares. */
function benchEvent(n: number, block: string): BenchEvent {
  const type = eventTypes[n % eventTypes.length]!;
  const tokenId = String(5_000_000 + n);
  const seller = benchWallet(n);
  const buyer = benchWallet(n * 7 + 3);
  const listing = { tokenId, seller, price: '1250000000000000000', listedAtBlock: block };
  switch (type) {
    case 'forge.fulfilled':
      return { type, entity: String(n), wallets: [buyer], payload: { requestId: String(n), buyer, tier: 2, tokenId, editionId: String(n % 40) } };
    case 'sale.completed':
      return {
        type,
        entity: `sale-${n}`,
        wallets: [seller, buyer],
        payload: { saleId: `sale-${n}`, tokenId, seller, buyer, price: listing.price, platformFee: '31250000000000000', royalty: '62500000000000000' },
      };
    case 'listing.opened':
      return { type, entity: `${tokenId}@${block}`, wallets: [seller], payload: { ...listing, editionId: String(n % 40) } };
    case 'listing.closed':
      return { type, entity: `${tokenId}@${block}`, wallets: [seller], payload: { ...listing, status: 'Sold' } };
    case 'nft.transferred':
      return { type, entity: tokenId, wallets: [seller, buyer], payload: { tokenId, from: seller, to: buyer } };
  }
}

/** How many events one statement appends: a few MB of JSON at most. */
const appendBatch = 5_000;

/**
 * Appends `count` events to the log as its writer does (core/events/
 * log-writer.ts): under the lock of its state row, at the positions after its
 * last, moving the last on in the same transaction. Their block is the log's
 * final block, at or below which the writer compares nothing, so the stack's
 * listener leaves them as they are. Resolves with their positions and when
 * the last commit returned (wall clock).
 */
export async function appendBenchEvents(sql: pg.Pool, count: number): Promise<{ first: number; last: number; committedAt: number }> {
  let first = 0;
  let last = 0;
  let committedAt = 0;
  for (let done = 0; done < count; done += appendBatch) {
    const client = await sql.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ last: string; block: string }>(
        'SELECT last_position::text AS last, final_block::text AS block FROM hatchery.event_log FOR UPDATE',
      );
      if (!rows[0]) throw new Error('the event log has not started: the stack’s listener starts it once it leads');
      const start = Number(rows[0].last) + 1;
      const events = Array.from({ length: Math.min(appendBatch, count - done) }, (_, i) => benchEvent(start + i, rows[0]!.block));
      await client.query(
        `INSERT INTO hatchery.events (position, type, chain_id, block, entity, wallets, payload)
         SELECT $1::bigint + e.ordinality - 1, e.value->>'type', 31337, $2::numeric, e.value->>'entity',
           ARRAY(SELECT jsonb_array_elements_text(e.value->'wallets')), e.value->'payload'
         FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(value, ordinality)`,
        [start, rows[0].block, JSON.stringify(events)],
      );
      last = start + events.length - 1;
      await client.query('UPDATE hatchery.event_log SET last_position = $1, updated_at = now()', [last]);
      await client.query('COMMIT');
      committedAt = wallMs();
      first ||= start;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
  return { first, last, committedAt };
}

/** Resolves once the stack's listener has started the event log (it does once it leads). */
export async function eventLogStarted(sql: pg.Pool, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await sql.query('SELECT 1 FROM hatchery.event_log')).rowCount === 0) {
    if (Date.now() > deadline) throw new Error('the event log did not start: is the stack’s listener leading?');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
