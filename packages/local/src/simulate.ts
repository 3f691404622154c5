import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { advanceCheckpoint, createPonderCheckpoint, demoAddress, demoChainId, indexerContents, latestBlockSql } from './demo-data';
import { followLauncher } from './launcher';
import { findRunningStack, StartupError } from './record';
import { localSettings } from './settings';
import { indexerTable, notificationChannel } from '@hatchery/core/indexer/names';
import { addressPattern } from '@hatchery/core/address';

/**
 * Indexer activity, written as the indexer writes it: each change in its own
 * transaction that ends with a NOTIFY on the indexer's channel (`<schema>_live_query`). `npm run simulate`
 * drives the running local stack with it; tests and benchmarks use the writer.
 * With `checkpoint` (demo data only: it keeps Ponder's tables, see demo-data.ts), each change also moves the demo
 * chain's `_ponder_checkpoint` to its block in the same transaction, as Ponder does, so `minBlock` reads see it.
 */
export function indexerActivity(pool: pg.Pool, { checkpoint = false }: { checkpoint?: boolean } = {}) {
  async function commit(payload: string, block: string | undefined, work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await work(client);
      if (checkpoint && block !== undefined) await advanceCheckpoint(client, BigInt(block));
      await client.query('SELECT pg_notify($1, $2)', [notificationChannel(), payload]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  return {
    list: (listing: { tokenId: string; seller: string; price: string; block: string; editionId?: string }) =>
      commit('listings', listing.block, async (client) => {
        await client.query(
          `INSERT INTO ${indexerTable('listings')} (token_id, seller, price, status, edition_id, listed_at_block, updated_at_block, tx_hash)
           VALUES ($1::numeric, $2::text, $3::numeric, 'Active', $4::numeric, $5::numeric, $5::numeric, '0x' || md5($1::text || ':' || $5::text))
           ON CONFLICT (token_id) DO UPDATE SET seller = $2::text, price = $3::numeric, status = 'Active', listed_at_block = $5::numeric, updated_at_block = $5::numeric`,
          [listing.tokenId, listing.seller, listing.price, listing.editionId ?? null, listing.block],
        );
      }),

    sell: (sale: { tokenId: string; buyer: string; block: string }) =>
      commit('listings,sales', sale.block, async (client) => {
        await client.query(
          `WITH sold AS (UPDATE ${indexerTable('listings')} SET status = 'Sold', updated_at_block = $3::numeric WHERE token_id = $1::numeric AND status = 'Active' RETURNING seller, price)
           INSERT INTO ${indexerTable('sales')} (id, token_id, seller, buyer, price, platform_fee, royalty, block_number)
           SELECT 'sale-' || $1::text || '-' || $3::text, $1::numeric, seller, $2::text, price, price / 40, price / 20, $3::numeric FROM sold`,
          [sale.tokenId, sale.buyer, sale.block],
        );
      }),

    cancel: (cancel: { tokenId: string; block: string }) =>
      commit('listings', cancel.block, async (client) => {
        await client.query(
          `UPDATE ${indexerTable('listings')} SET status = 'Cancelled', updated_at_block = $2::numeric WHERE token_id = $1::numeric AND status = 'Active'`,
          [cancel.tokenId, cancel.block],
        );
      }),

    requestForge: (request: { requestId: string; buyer: string; tier: number; block: string }) =>
      commit('forge_requests', request.block, async (client) => {
        await client.query(
          `INSERT INTO ${indexerTable('forge_requests')} (request_id, buyer, tier, status, block_number) VALUES ($1, $2, $3, 'Requested', $4)`,
          [request.requestId, request.buyer, request.tier, request.block],
        );
      }),

    /**
     * The random-number fulfilment of a request (created on the spot when it was never requested). `midBlock`: more of
     * its block follows in a later commit, so the checkpoint does not reach the block yet.
     */
    fulfil: (fulfilment: { requestId: string; buyer: string; tokenId: string; editionId: string; block: string; midBlock?: boolean }) =>
      commit('forge_requests', fulfilment.midBlock ? undefined : fulfilment.block, async (client) => {
        await client.query(
          `INSERT INTO ${indexerTable('forge_requests')} (request_id, buyer, tier, status, token_id, edition_id, block_number, fulfilled_at_block)
           VALUES ($1::numeric, $2::text, 1, 'Fulfilled', $3::numeric, $4::numeric, $5::numeric, $5::numeric)
           ON CONFLICT (request_id) DO UPDATE SET status = 'Fulfilled', token_id = $3::numeric, edition_id = $4::numeric, fulfilled_at_block = $5::numeric`,
          [fulfilment.requestId, fulfilment.buyer, fulfilment.tokenId, fulfilment.editionId, fulfilment.block],
        );
      }),

    notify: () => commit('', undefined, async () => undefined),
  };
}

/** The database of the stack running on HATCHERY_DATA_DIR, which the simulated indexer writes to. */
async function databaseUrl(): Promise<string> {
  const stack = await findRunningStack(localSettings().HATCHERY_DATA_DIR);
  if (!stack.databaseUrl) throw new StartupError(`the Hatchery on ${stack.url} did not record its database; restart it`);
  return stack.databaseUrl;
}

/** A whole number of at least `min`, or a one-line refusal naming the option. */
function wholeNumber(option: string, raw: string, min: number): number {
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < min) throw new StartupError(`--${option} takes a whole number of at least ${min}, not '${raw}'`);
  return Number(raw);
}

async function next(pool: pg.Pool, sql: string): Promise<bigint> {
  const { rows } = await pool.query<{ value: string }>(sql);
  return BigInt(rows[0]?.value ?? '0') + 1n;
}

/** Endless (or --count) indexer activity against the running local stack, one block per step. */
async function simulate(): Promise<void> {
  const { values } = parseArgs({
    options: {
      every: { type: 'string', default: '2000' },
      count: { type: 'string', default: '0' },
      wallet: { type: 'string', default: demoAddress(1) },
    },
  });
  const wallet = values.wallet.toLowerCase();
  if (!addressPattern.test(wallet)) throw new StartupError('--wallet must be 0x followed by 40 hex characters');
  const everyMs = wholeNumber('every', values.every, 1);
  const steps = wholeNumber('count', values.count, 0) || Infinity;

  const pool = new pg.Pool({ connectionString: await databaseUrl(), max: 2 });
  // Ponder's checkpoint moves with each block only where the stack wrote the demo data, which keeps one; never in an indexer's own schema.
  const contents = await indexerContents(pool);
  const demoData = contents.present && contents.demo;
  await createIndexerSchema(pool);
  if (demoData) await createPonderCheckpoint(pool);
  const activity = indexerActivity(pool, { checkpoint: demoData });
  let block = await next(pool, latestBlockSql);
  let tokenId = await next(
    pool,
    `SELECT greatest((SELECT max(token_id) FROM ${indexerTable('listings')}), (SELECT max(token_id) FROM ${indexerTable('nfts')}), 0)::text AS value`,
  );
  let requestId = await next(pool, `SELECT coalesce(max(request_id), 0)::text AS value FROM ${indexerTable('forge_requests')}`);
  const open: bigint[] = [];
  const listed: bigint[] = [];
  const seller = demoAddress(2);
  console.log(
    `Simulating indexer activity every ${everyMs} ms from block ${block}; forge requests are ${wallet}'s${
      demoData ? `; Ponder's checkpoint (chain ${demoChainId}) follows each block` : ''
    }. Ctrl-C stops.`,
  );

  const actions = [
    async () => {
      const id = tokenId++;
      listed.push(id);
      await activity.list({ tokenId: String(id), seller, price: String(10n ** 17n * ((id % 50n) + 1n)), block: String(block) });
      return `listed token ${id}  → marketChanged`;
    },
    async () => {
      const ids = [requestId++, requestId++];
      for (const id of ids) await activity.requestForge({ requestId: String(id), buyer: wallet, tier: Number(id % 3n) + 1, block: String(block) });
      open.push(...ids);
      return `forge requests ${ids.join(', ')} by ${wallet}`;
    },
    async () => {
      const id = listed.shift();
      if (id === undefined) return 'nothing to sell';
      await activity.sell({ tokenId: String(id), buyer: wallet, block: String(block) });
      return `sold token ${id} to ${wallet}  → marketChanged`;
    },
    async () => {
      // Two fulfilments in one block, committed apart, as an indexer may: both must reach the client.
      const fulfilled = open.splice(0, 2);
      for (const [index, id] of fulfilled.entries()) {
        await activity.fulfil({
          requestId: String(id),
          buyer: wallet,
          tokenId: String(tokenId++),
          editionId: String(1n + (id % 40n)),
          block: String(block),
          midBlock: index < fulfilled.length - 1,
        });
      }
      return fulfilled.length ? `fulfilled forge request(s) ${fulfilled.join(', ')} in two commits  → forgeFulfilled to ${wallet}` : 'nothing to fulfil';
    },
  ];

  // A signal ends the wait between blocks at once; a block being written is finished first, so none is left half-made.
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  followLauncher(stop);
  for (let step = 0; step < steps && !stopping.signal.aborted; step++, block++) {
    const what = await actions[step % actions.length]!();
    // A block that wrote nothing (nothing to sell or fulfil) is indexed all the same.
    if (demoData) await advanceCheckpoint(pool, block);
    console.log(`block ${block}: ${what}`);
    if (step + 1 < steps) await sleep(everyMs, undefined, { signal: stopping.signal }).catch(() => undefined);
  }
  await pool.end();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  simulate().catch((error: unknown) => {
    process.stderr.write(`npm run simulate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof StartupError ? 2 : 1);
  });
}
