import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deliveryLimits } from '@hatchery/core/webhooks/delivery';
import { migrate } from '@hatchery/core/migrate';
import { startWebhooks, type Webhooks } from '@hatchery/listener/webhooks';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import { logger } from '@hatchery/platform/telemetry/logger';
import { waitFor } from '../realtime/support';

/** More events than the workers take on one wake-up, many times over. */
const backlog = deliveryLimits.concurrency * 40;

let database: EmbeddedDatabase;
let dataDir: string;
let sql: pg.Pool;
let webhooks: Webhooks;
const received: string[] = [];
let delivered = 0;
const receiver = http.createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    received.push(String(request.headers['webhook-id']));
    response.writeHead(204).end();
  });
});

beforeAll(async () => {
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-webhook-backlog-'));
  database = await startEmbeddedPostgres({ dataDir, persistent: false, templateDir: inject('postgresTemplateDir') });
  await migrate(database.url);
  sql = new pg.Pool({ connectionString: database.url, max: 2 });
  // The cluster stops right after the pool ends: a client closing late must not fail the file.
  sql.on('error', () => undefined);
  // A log that already holds the backlog, and an endpoint whose dispatch stands before all of it.
  await sql.query(`INSERT INTO hatchery.event_log (last_position, final_block) VALUES ($1, 10)`, [backlog]);
  await sql.query(
    `INSERT INTO hatchery.events (position, type, chain_id, block, entity, wallets, payload)
     SELECT n, 'forge.fulfilled', 1, 10, n::text, ARRAY['0x00000000000000000000000000000000000000a1'],
       jsonb_build_object('requestId', n::text, 'buyer', '0x00000000000000000000000000000000000000a1', 'tier', 1)
     FROM generate_series(1, $1::int) AS n`,
    [backlog],
  );
  await sql.query(`INSERT INTO hatchery.webhook_dispatch (endpoint, position) VALUES ('game', 0)`);
  webhooks = await startWebhooks({
    databaseUrl: database.url,
    endpoints: [
      {
        name: 'game',
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        types: ['forge.fulfilled'],
        finality: 'latest',
        secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      },
    ],
    deployed: false,
    retryWindowMs: 3_600_000,
    log: logger().child({ component: 'webhooks' }),
    metrics: { delivered: () => delivered++, failedAttempt: () => undefined, deadLettered: () => undefined, oldestPending: () => undefined },
  });
});

afterAll(async () => {
  await webhooks?.stop();
  await sql?.end();
  await database?.stop();
  await rm(dataDir, { recursive: true, force: true });
  receiver.close();
});

describe('a backlog of deliveries', () => {
  it('drains at the workers’ pace, not a wake-up’s or a poll’s: a worker whose fetch came back full fetches again at once', async () => {
    const started = performance.now();
    webhooks.dispatch();
    // One wake-up hands each worker one fetch; were the rest left to the poll, this would take minutes.
    await waitFor(() => new Set(received).size === backlog, `${backlog} deliveries`, 20_000);
    console.log(`${backlog} deliveries drained in ${(performance.now() - started).toFixed(0)} ms (load ${(await import('node:os')).loadavg()[0]!.toFixed(2)})`);
    // A worker counts a delivery once the receiver's answer is in, which comes after the receiver saw the post.
    await waitFor(() => delivered === backlog, `${backlog} deliveries counted`, 20_000);
    expect(received).toHaveLength(backlog);
  });
});
