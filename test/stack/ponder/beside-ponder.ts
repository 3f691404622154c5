/**
 * Hatchery beside the real Ponder, as a platform team runs them: one
 * PostgreSQL, Hatchery's `npm start` pointed at it by DATABASE_URL and started
 * first, then a Hardhat chain and `ponder start` in the layout under test.
 * test/stack/ponder/direct.test.ts and views.test.ts run the same checks on it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import {
  actions,
  deploy,
  freePort,
  startChain,
  startPonder,
  waitForIndexedBlock,
  type Actions,
  type Chain,
  type Contracts,
  type Layout,
  type RunningPonder,
} from './chain';

const repository = join(import.meta.dirname, '..', '..');

export interface Hatchery {
  url: string;
  output(): string;
  get(path: string): Promise<Response>;
  json<T = unknown>(path: string): Promise<T>;
  /** A counter or a summary's count of the stack's /metrics (Prometheus text). */
  metric(name: string): Promise<number>;
  stop(): Promise<void>;
}

export interface BesidePonder {
  layout: Layout;
  databaseUrl: string;
  sql<Row extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]>;
  hatchery: Hatchery;
  /** What Hatchery's banner said of the indexer schema when it started, before Ponder existed. */
  banner: string;
  /** Whether the schema Hatchery reads existed when Hatchery was ready (it must not: Hatchery creates nothing there). */
  schemaBeforePonder: boolean;
  chain: Chain;
  contracts: Contracts;
  act: Actions;
  ponder: RunningPonder;
  /** Resolves once Ponder has indexed `block` and Hatchery's /health says so. */
  indexed(block: bigint): Promise<void>;
  stop(): Promise<void>;
}

/** `npm start`, as docs/ponder.md runs it beside an indexer: its own data dir, the shared database, JSON logs; `env`: its further settings. */
async function startHatchery(databaseUrl: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<{ hatchery: Hatchery; banner: string }> {
  const port = await freePort();
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: repository,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      HATCHERY_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      DYNAMODB_ENDPOINT: '',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'warn',
      IP_RATE_LIMIT_PER_SECOND: '0',
      ...env,
    },
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const deadline = Date.now() + 120_000;
  while (!output.includes('Hatchery is running at')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const url = `http://127.0.0.1:${port}`;
  const get = (path: string) => fetch(`${url}${path}`);
  const hatchery: Hatchery = {
    url,
    output: () => output,
    get,
    async json<T>(path: string) {
      const response = await get(path);
      if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as T;
    },
    async metric(name) {
      const text = await (await get('/metrics')).text();
      const line = text.split('\n').find((each) => each.startsWith(`${name}{`));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    },
  };
  return { hatchery, banner: output.split('\n').find((line) => line.includes('Indexer')) ?? '' };
}

/** `hatcheryEnv`: settings of Hatchery's beyond those docs/ponder.md gives it (WEBHOOK_ENDPOINTS, say). */
export async function besidePonder(layout: Layout, { hatcheryEnv = {} }: { hatcheryEnv?: NodeJS.ProcessEnv } = {}): Promise<BesidePonder> {
  const root = await mkdtemp(join(tmpdir(), 'hatchery-ponder-'));
  await chmod(root, 0o755);
  const cleanups: Array<() => Promise<unknown>> = [() => rm(root, { recursive: true, force: true })];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const database: EmbeddedDatabase = await startEmbeddedPostgres({
      dataDir: join(root, 'pg'),
      persistent: false,
      templateDir: inject('postgresTemplateDir'),
    });
    cleanups.push(() => database.stop());
    await database.createDatabase('shared');
    const databaseUrl = database.tcpUrl.replace(/\/postgres$/, '/shared');
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    pool.on('error', () => undefined);
    cleanups.push(() => pool.end());
    const sql: BesidePonder['sql'] = async (text, values) => (await pool.query(text, values)).rows;

    // Hatchery first, on a database it was given: it must leave the indexer's schema to Ponder.
    const { hatchery, banner } = await startHatchery(databaseUrl, join(root, 'hatchery'), hatcheryEnv);
    cleanups.push(() => hatchery.stop());
    const [{ present }] = (await sql<{ present: boolean }>(`SELECT to_regnamespace('indexer') IS NOT NULL AS present`)) as [{ present: boolean }];

    const chain = await startChain();
    cleanups.push(() => chain.stop());
    const contracts = await deploy(chain);
    const ponder = await startPonder({ databaseUrl, layout, chain, contracts, pollingIntervalMs: 100 });
    cleanups.push(() => ponder.stop());

    const indexed = async (block: bigint) => {
      await waitForIndexedBlock(databaseUrl, ponder.readSchema, block, 30_000);
      // Only ends a wait that never ends: the instance's view of the index is a second old at most.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const health = await hatchery.json<{ indexer: 'unknown' | { chains: { block: string }[] } }>('/health');
        if (health.indexer !== 'unknown' && BigInt(health.indexer.chains[0]!.block) >= block) return;
        if (Date.now() > deadline) throw new Error(`Hatchery's /health did not reach block ${block}: ${JSON.stringify(health)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    return { layout, databaseUrl, sql, hatchery, banner, schemaBeforePonder: present, chain, contracts, act: actions(chain, contracts), ponder, indexed, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
