import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { demoSizes } from '@hatchery/local/demo-data';
import { startStack } from '@hatchery/local/stack';
import { coldStartBench } from './cold-start';
import { loadAverage, type BenchSection } from './context';
import { editionsBench } from './editions';
import { accountsBench } from './accounts';

/**
 * `npm run bench`: the stack on the bench dataset (a million NFTs and sales),
 * each section printing its figures beside a baseline measured in the same run.
 * BENCH_SECTIONS=editions,... runs a subset; BENCH_DURATION_MS sets each run's length.
 */
const sections: Record<string, BenchSection> = {
  editions: editionsBench,
  accounts: accountsBench,
  'cold-start': coldStartBench,
  indexed: (context) => import('./indexed').then(({ indexedBench }) => indexedBench(context)),
  realtime: (context) => import('./realtime').then(({ realtimeBench }) => realtimeBench(context)),
  observability: (context) => import('./observability').then(({ observabilityBench }) => observabilityBench(context)),
  logging: (context) => import('./logging').then(({ loggingBench }) => loggingBench(context)),
  cursor: (context) => import('./cursor').then(({ cursorBench }) => cursorBench(context)),
  'min-block': (context) => import('./min-block').then(({ minBlockBench }) => minBlockBench(context)),
  pings: (context) => import('./pings').then(({ pingsBench }) => pingsBench(context)),
  warm: (context) => import('./warm').then(({ warmBench }) => warmBench(context)),
  throughput: (context) => import('./throughput').then(({ throughputBench }) => throughputBench(context)),
  webhooks: (context) => import('./webhooks').then(({ webhooksBench }) => webhooksBench(context)),
  replay: (context) => import('./replay').then(({ replayBench }) => replayBench(context)),
  // Last: it stops the stack's listener for listeners of its own.
  quota: (context) => import('./quota').then(({ quotaBench }) => quotaBench(context)),
};

const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const durationMs = Number(process.env.BENCH_DURATION_MS ?? 5000);
const wanted = (process.env.BENCH_SECTIONS ?? Object.keys(sections).join(',')).split(',');

// No fan-out budget for the stack's listener unless asked: the sections time the fan-out itself (`quota` sets its own budgets).
Object.assign(process.env, {
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  IP_RATE_LIMIT_PER_SECOND: '0',
  DATABASE_POOL_MAX: String(concurrency),
  FANOUT_POSTS_PER_SECOND: process.env.FANOUT_POSTS_PER_SECOND ?? '0',
  FANOUT_MIN_INTERVAL_MS: process.env.FANOUT_MIN_INTERVAL_MS ?? '0',
});
// BENCH_WEBHOOKS=1: the stack's listener delivers every event to a receiver of its own, as a stage with an endpoint does.
const stackReceivers = process.env.BENCH_WEBHOOKS === '1' ? await import('./webhooks').then(({ stackEndpoint }) => stackEndpoint()) : undefined;
const dataDir = process.env.BENCH_DATA_DIR ?? (await mkdtemp(join(tmpdir(), 'hatchery-bench-')));
console.log(`Load average ${loadAverage()} before the bench; loading the bench dataset (${JSON.stringify(demoSizes.bench)}) into ${dataDir} …`);
const loadStarted = performance.now();
const stack = await startStack({ port: 0, dataDir, persistent: Boolean(process.env.BENCH_DATA_DIR), demoData: demoSizes.bench });
console.log(`Stack ready in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s; concurrency ${concurrency}, ${durationMs} ms per run.`);
const sql = new pg.Pool({ connectionString: stack.databaseUrl, max: concurrency });
// The cluster stops right after the pool ends; a client closing late must not crash the run.
sql.on('error', () => undefined);
try {
  for (const name of wanted) {
    const section = sections[name];
    if (!section) throw new Error(`unknown bench section '${name}' (have: ${Object.keys(sections).join(', ')})`);
    await section({ stack, sql, concurrency, durationMs });
  }
} finally {
  await sql.end();
  await stack.stop();
  stackReceivers?.child.close();
  if (!process.env.BENCH_DATA_DIR) await rm(dataDir, { recursive: true, force: true });
}
process.exit(0);
