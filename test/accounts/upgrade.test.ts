/**
 * Upgrades keep what users stored (docs/deploying.md, "Upgrading"): the
 * database is brought up release by release, each release being the
 * migrations up to one of them, as a stage deployed then would hold them. At
 * each, the API of the stack on that schema stores accounts, linked wallets,
 * open challenges and rate-limit counters; the next release's up step must
 * keep every row, column value and sequence position of the service's schema,
 * and today's API must read every account as it was stored.
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrationsDir, serviceSchema } from '@hatchery/core/migrate';
import { config } from '@hatchery/platform/config';
import { startDynalite } from '@hatchery/local/dynamo';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import { startStack, type RunningStack } from '@hatchery/local/stack';
import type { TestStack } from '../support/stack';
import { client, freshCaller, type Account, type Caller, type Challenge } from './support';

interface Snapshot {
  tables: Record<string, Record<string, unknown>[]>;
  sequences: Record<string, number>;
  rateLimitItems: unknown[];
}

/** What one release stored through its API, to read back through today's. */
interface Stored {
  release: string;
  caller: Caller;
  account: Account;
  challenge?: Challenge;
}

const migrations = readdirSync(migrationsDir)
  .filter((file) => file.endsWith('.sql'))
  .sort();
const work = mkdtempSync(join(tmpdir(), 'hatchery-upgrade-'));
// The database runs as the `postgres` system user, which must reach its folder inside.
chmodSync(work, 0o755);
let postgres: EmbeddedDatabase;
let dynamo: { endpoint: string; stop(): Promise<void> };
let pool: pg.Pool;
const stored: Stored[] = [];
/** Per release (its newest migration), what an up step changed in what earlier releases stored: empty when nothing was lost. */
const lost: Record<string, string[]> = {};

/** A folder holding the migrations of the release whose newest migration is `migrations[count - 1]`. */
function releaseDir(count: number): string {
  const dir = join(work, `release-${count}`);
  mkdirSync(dir, { recursive: true });
  for (const file of migrations.slice(0, count)) copyFileSync(join(migrationsDir, file), join(dir, file));
  return dir;
}

async function snapshot(): Promise<Snapshot> {
  const tables: Snapshot['tables'] = {};
  const { rows: names } = await pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name <> 'pgmigrations'`,
    [serviceSchema],
  );
  for (const { name } of names)
    tables[name] = (
      await pool.query<{ row: Record<string, unknown> }>(`SELECT to_jsonb(t) AS row FROM ${serviceSchema}.${pg.escapeIdentifier(name)} t`)
    ).rows.map((each) => each.row);
  const { rows: sequences } = await pool.query<{ name: string; position: string | null }>(
    `SELECT sequencename AS name, last_value AS position FROM pg_sequences WHERE schemaname = $1`,
    [serviceSchema],
  );
  const dynamoClient = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const { Items = [] } = await dynamoClient.send(new ScanCommand({ TableName: config().DYNAMODB_TABLE }));
  dynamoClient.destroy();
  return {
    tables,
    sequences: Object.fromEntries(sequences.map((sequence) => [sequence.name, Number(sequence.position ?? 0)])),
    rateLimitItems: Items.filter((item) => item.pk?.S?.startsWith('ratelimit#')).sort((a, b) => `${a.pk!.S}${a.sk!.S}`.localeCompare(`${b.pk!.S}${b.sk!.S}`)),
  };
}

/** What the newer snapshot lost of the older: a table, a row (compared on the older's columns), a sequence's position, a counter. */
function losses(before: Snapshot, after: Snapshot): string[] {
  const found: string[] = [];
  for (const [table, rows] of Object.entries(before.tables)) {
    const now = after.tables[table];
    if (!now) {
      found.push(`${table}: the table is gone with its ${rows.length} rows`);
      continue;
    }
    for (const row of rows) {
      const kept = now.some((candidate) => Object.entries(row).every(([column, value]) => JSON.stringify(candidate[column]) === JSON.stringify(value)));
      if (!kept) found.push(`${table}: ${JSON.stringify(row)} is gone or changed`);
    }
  }
  for (const [sequence, position] of Object.entries(before.sequences))
    if (!(sequence in after.sequences) || after.sequences[sequence]! < position)
      found.push(`${sequence}: was at ${position}, now ${after.sequences[sequence] ?? 'gone'}`);
  if (JSON.stringify(after.rateLimitItems) !== JSON.stringify(before.rateLimitItems)) found.push('the rate-limit counters changed');
  return found;
}

/** Through the API: two accounts that link a wallet, one left with an open challenge; every wallet POST counts against its caller's limit. */
async function storeThroughApi(stack: RunningStack, release: string): Promise<void> {
  const asTestStack = stack as unknown as TestStack;
  for (const [index, linked] of [true, true, false].entries()) {
    const caller = freshCaller(`release-${release}-${index}`);
    const api = await client(asTestStack, caller);
    const challenge = await api.nonce();
    expect(challenge.status, release).toBe(200);
    if (!linked) {
      stored.push({ release, caller, account: (await api.me()).body, challenge: challenge.body });
      continue;
    }
    const wallet = privateKeyToAccount(generatePrivateKey());
    const reply = await api.link({
      address: wallet.address,
      signature: await wallet.signMessage({ message: challenge.body.message }),
      nonce: challenge.body.nonce,
    });
    expect(reply.status, `${release}: ${JSON.stringify(reply.body)}`).toBe(200);
    stored.push({ release, caller, account: reply.body });
  }
}

const start = (migrationsFolder?: string) =>
  startStack({
    port: 0,
    dataDir: join(work, 'stack'),
    persistent: true,
    databaseUrl: postgres.url,
    dynamoEndpoint: dynamo.endpoint,
    demoData: false,
    listener: false,
    migrationsDir: migrationsFolder,
  });

beforeAll(async () => {
  Object.assign(process.env, { LOG_LEVEL: 'silent', IP_RATE_LIMIT_PER_SECOND: '0' });
  postgres = await startEmbeddedPostgres({ dataDir: join(work, 'db'), persistent: false, templateDir: inject('postgresTemplateDir') });
  dynamo = await startDynalite();
  pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
  let before: Snapshot | undefined;
  // From the first release with accounts (the first migration) to today's; each start applies that release's up steps.
  for (let count = 1; count <= migrations.length; count++) {
    const release = migrations[count - 1]!;
    const stack = await start(count < migrations.length ? releaseDir(count) : undefined);
    try {
      if (before) lost[release] = losses(before, await snapshot());
      await storeThroughApi(stack, release);
      before = await snapshot();
    } finally {
      await stack.stop();
    }
  }
}, 180_000);

afterAll(async () => {
  await pool?.end();
  await dynamo?.stop();
  await postgres?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('upgrading release by release', () => {
  it('runs every migration’s up step over what the releases before stored, and loses none of it', () => {
    expect(Object.keys(lost)).toEqual(migrations.slice(1));
    expect(lost).toEqual(Object.fromEntries(migrations.slice(1).map((release) => [release, []])));
  });

  it('stored accounts, linked wallets, open challenges and rate-limit counters at every release, so each up step had them to keep', async () => {
    const now = await snapshot();
    expect(now.tables.accounts).toHaveLength(3 * migrations.length);
    expect(now.tables.accounts!.filter((row) => row.wallet_address !== null)).toHaveLength(2 * migrations.length);
    expect(now.tables.wallet_challenges).toHaveLength(migrations.length);
    expect(now.rateLimitItems.length).toBeGreaterThanOrEqual(3 * migrations.length);
  });

  it('lets today’s API read every account as the release that stored it did, and link with a challenge an earlier release opened', async () => {
    const stack = await start();
    try {
      for (const { release, caller, account, challenge } of stored) {
        const api = await client(stack as unknown as TestStack, caller);
        expect((await api.me()).body, release).toEqual(account);
        if (!challenge) continue;
        expect((await api.nonce()).body, `${release}: the open challenge is the same`).toEqual(challenge);
      }
      const opened = stored.find((each) => each.challenge)!;
      const wallet = privateKeyToAccount(generatePrivateKey());
      const api = await client(stack as unknown as TestStack, opened.caller);
      const reply = await api.link({
        address: wallet.address,
        signature: await wallet.signMessage({ message: opened.challenge!.message }),
        nonce: opened.challenge!.nonce,
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    } finally {
      await stack.stop();
    }
  });

  it('rolls back: the release before today’s starts on today’s schema (its migrator has nothing to apply) and reads every account', async () => {
    const before = await snapshot();
    const stack = await start(releaseDir(migrations.length - 1));
    try {
      for (const { release, caller, account } of stored)
        expect((await (await client(stack as unknown as TestStack, caller)).me()).body.id, release).toBe(account.id);
    } finally {
      await stack.stop();
    }
    expect(losses(before, await snapshot())).toEqual([]);
  });

  it('finds what an up step loses: a dropped column, a deleted row, a sequence set back', () => {
    const before: Snapshot = {
      tables: {
        accounts: [
          { id: 'a', nickname: 'Alice' },
          { id: 'b', nickname: 'Bob' },
        ],
      },
      sequences: { market_version: 7 },
      rateLimitItems: [],
    };
    const after: Snapshot = { tables: { accounts: [{ id: 'a' }] }, sequences: { market_version: 1 }, rateLimitItems: [] };
    expect(losses(before, after)).toEqual([
      'accounts: {"id":"a","nickname":"Alice"} is gone or changed',
      'accounts: {"id":"b","nickname":"Bob"} is gone or changed',
      'market_version: was at 7, now 1',
    ]);
  });
});
