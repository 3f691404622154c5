/**
 * Upgrades keep what users stored (docs/deploying.md, "Upgrading"): the
 * database is brought up release by release, as a stage deployed then would
 * hold it. A release is the last commit before the next migration was added
 * (test/stack/accounts/releases.ts reads them from git history), and the newest is
 * today's working tree. Each earlier release runs its own code in a tree taken
 * from its commit: its own migrations, handlers, local stack and identity
 * provider store accounts, linked wallets, open challenges and rate-limit
 * counters through its API. The next release's up steps must keep every row,
 * column value and sequence position of the service's schema, and today's API
 * must read every account as it was stored.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrationsDir, serviceSchema } from '@hatchery/core/migrate';
import { configSchema } from '@hatchery/platform/config';
import { startDynalite } from '@hatchery/local/dynamo';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import { startStack } from '@hatchery/local/stack';
import type { TestStack } from '../../support/stack';
import { materialize, type Release, type ReleaseStack, releaseName, releasesFromHistory, startReleaseStack } from './releases';
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
/** The releases from git history, oldest first; the last is today's working tree. */
let history: Release[] = [];
const stored: Stored[] = [];
/** Per release (its newest migration), what its up steps changed in what earlier releases stored: empty when nothing was lost. */
const lost: Record<string, string[]> = {};
/** Per release, the migrations the database had once its own stack had started. */
const applied: Record<string, string[]> = {};

// The table every release's stack makes; read without config(), which wants the variables only a stack in this process sets.
const table = configSchema.shape.DYNAMODB_TABLE.parse(process.env.DYNAMODB_TABLE);

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
  const { Items = [] } = await dynamoClient.send(new ScanCommand({ TableName: table }));
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
    // Every row of a snapshot holds every column (to_jsonb), so a column no row has now is gone: said once, not once a row.
    const columns = now[0] ? new Set(Object.keys(now[0])) : undefined;
    const dropped = new Set([...new Set(rows.flatMap((row) => Object.keys(row)))].filter((column) => columns && !columns.has(column)));
    for (const column of dropped) found.push(`${table}.${column}: the column is gone with its values in ${rows.length} rows`);
    for (const row of rows) {
      const kept = now.some((candidate) =>
        Object.entries(row).every(([column, value]) => dropped.has(column) || JSON.stringify(candidate[column]) === JSON.stringify(value)),
      );
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
async function storeThroughApi(stack: ReleaseStack, release: string): Promise<void> {
  // `client` reads only the stack's URL and its identity provider's signToken.
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

/** Today's stack, in this process; each stack of a stage shares its data folder, so its identity provider keeps one key. */
const start = () =>
  startStack({
    port: 0,
    dataDir: join(work, 'stack'),
    persistent: true,
    databaseUrl: postgres.url,
    dynamoEndpoint: dynamo.endpoint,
    demoData: false,
    listener: false,
    fanOutWorkers: 1,
  });

/** The release's own stack: an earlier one from its commit's tree in a child process, today's in this one. */
async function startRelease(release: Release): Promise<ReleaseStack> {
  if (!release.commit) return start();
  const tree = join(work, `release-${release.commit}`);
  // The rollback starts a release that already ran.
  if (!existsSync(tree)) materialize(release.commit, tree);
  return startReleaseStack(tree, { dataDir: join(work, 'stack'), databaseUrl: postgres.url, dynamoEndpoint: dynamo.endpoint });
}

const describeRelease = (release: Release) => `${releaseName(release)} (${release.commit ?? 'the working tree'})`;

beforeAll(async () => {
  Object.assign(process.env, { LOG_LEVEL: 'silent', IP_RATE_LIMIT_PER_SECOND: '0' });
  // First, so a clone without history fails at once, naming the reason.
  history = releasesFromHistory(migrations);
  postgres = await startEmbeddedPostgres({ dataDir: join(work, 'db'), persistent: false, templateDir: inject('postgresTemplateDir') });
  dynamo = await startDynalite();
  pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
  // An idle client the server ends as it shuts down, after the pool's end, is no finding (57P01).
  pool.on('error', () => undefined);
  let before: Snapshot | undefined;
  // From the first release with accounts (the first migration) to today's; each release's stack applies its own up steps.
  for (const release of history) {
    const name = releaseName(release);
    const stack = await startRelease(release);
    try {
      applied[name] = (await pool.query<{ name: string }>(`SELECT name FROM ${serviceSchema}.pgmigrations ORDER BY run_on, id`)).rows.map(
        (row) => `${row.name}.sql`,
      );
      if (before) lost[name] = losses(before, await snapshot());
      await storeThroughApi(stack, name).catch((error: Error) => {
        // An up step that dropped what the API reads also breaks the API: the finding is the loss, so it leads.
        const found = lost[name]?.length ? `, after its up steps lost:\n${lost[name].map((each) => `  ${each}`).join('\n')}\n` : '';
        throw new Error(`release ${describeRelease(release)}: storing through its API failed${found}: ${error.message}`, { cause: error });
      });
      before = await snapshot();
    } finally {
      await stack.stop();
    }
  }
}, 240_000);

afterAll(async () => {
  await pool?.end();
  await dynamo?.stop();
  await postgres?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('upgrading release by release', () => {
  it('takes every earlier release from git history, and each applied its own migrations and no later one', () => {
    const names = history.map(describeRelease).join(', ');
    expect(history[0]?.migrations, `the releases: ${names}`).toEqual(migrations.slice(0, 1));
    expect(history.at(-1)?.migrations, `the releases: ${names}`).toEqual(migrations);
    expect(applied, `the releases: ${names}`).toEqual(Object.fromEntries(history.map((release) => [releaseName(release), release.migrations])));
  });

  it('runs every migration’s up step over what the releases before stored, and loses none of it', () => {
    const later = history.slice(1).map(releaseName);
    expect(Object.keys(lost)).toEqual(later);
    expect(lost).toEqual(Object.fromEntries(later.map((release) => [release, []])));
  });

  it('stored accounts, linked wallets, open challenges and rate-limit counters at every release, so each up step had them to keep', async () => {
    const now = await snapshot();
    expect(now.tables.accounts).toHaveLength(3 * history.length);
    expect(now.tables.accounts!.filter((row) => row.wallet_address !== null)).toHaveLength(2 * history.length);
    expect(now.tables.wallet_challenges).toHaveLength(history.length);
    expect(now.rateLimitItems.length).toBeGreaterThanOrEqual(3 * history.length);
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

  it('rolls back: the release before today’s, its own code, starts on today’s schema (its migrator has nothing to apply) and reads every account', async () => {
    const before = await snapshot();
    const stack = await startRelease(history.at(-2)!);
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
      'accounts.nickname: the column is gone with its values in 2 rows',
      'accounts: {"id":"b","nickname":"Bob"} is gone or changed',
      'market_version: was at 7, now 1',
    ]);
  });
});
