import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshnessCacheMs, type Freshness } from '@hatchery/core/indexer/freshness';
import { awaitMinBlock, parseMinBlock } from '@hatchery/core/indexer/min-block';
import { loadAverage, type BenchSection } from './context';
import { httpGet, measureInChild, printTable, type Figures, type Row } from './measure';

/** Several runs as one: their mean throughput and latencies, PostgreSQL's CPU per request over all their requests. */
function pooled(runs: Figures[]): Figures {
  const mean = (value: (figures: Figures) => number) => runs.reduce((sum, figures) => sum + value(figures), 0) / runs.length;
  const requests = runs.reduce((sum, figures) => sum + figures.requests, 0);
  const database = runs.every((figures) => figures.databaseMsPerRequest !== undefined)
    ? { databaseMsPerRequest: runs.reduce((sum, figures) => sum + figures.databaseMsPerRequest! * figures.requests, 0) / requests }
    : {};
  return {
    requests,
    rps: mean((f) => f.rps),
    p50Ms: mean((f) => f.p50Ms),
    p99Ms: mean((f) => f.p99Ms),
    errors: runs.reduce((sum, f) => sum + f.errors, 0),
    ...database,
  };
}

const chainId = 31337;

/** Ponder's checkpoint string (75 digits) for the end of `block`. */
const checkpoint = (block: bigint) =>
  `${String(Math.floor(Date.now() / 1000)).padStart(10, '0')}${String(chainId).padStart(16, '0')}${String(block).padStart(16, '0')}${'9'.repeat(16)}9${'9'.repeat(16)}`;

const cases = [
  { name: 'editions (default page)', path: '/editions?pageSize=20' },
  { name: 'sales (default page, 1M rows)', path: '/transparency/sales' },
];

/**
 * The parameter's own work on a request whose block is reached, in this process: parsing it, and comparing it with
 * the instance's cached view of the index (the same promise the headers use). CPU µs per request.
 */
async function ownWorkMicros(block: string): Promise<number> {
  const freshness: Promise<Freshness> = Promise.resolve({
    chains: [{ chainId, block, safeBlock: block, finalizedBlock: block, blockTimestamp: new Date().toISOString(), lagSeconds: 0, ready: true }],
  });
  const calls = 200_000;
  const run = async () => {
    for (let i = 0; i < calls; i++) await awaitMinBlock(parseMinBlock(`${chainId}:${block}`)!, { read: () => freshness });
  };
  await run();
  const before = process.cpuUsage();
  await run();
  const { user, system } = process.cpuUsage(before);
  return (user + system) / calls;
}

/**
 * A list read with a `minBlock` the index has already reached, beside the same
 * read without it, in the same run (the goal: at most 5 % of throughput). The
 * bench dataset has no Ponder, so the section writes Ponder's checkpoint
 * tables for its own runs, at the highest block of the sales, and drops them
 * after. Each pair runs twice, plain first then the other way round, so a
 * drift of the machine shows as a difference between the two.
 */
export const minBlockBench: BenchSection = async ({ stack, sql, concurrency, durationMs }) => {
  const [{ block }] = (await sql.query<{ block: string }>('SELECT coalesce(max(block_number), 0)::text AS block FROM indexer.sales')).rows as [
    { block: string },
  ];
  // The demo data's own checkpoint (at its latest block) makes way for the section's.
  await sql.query(`DROP TABLE IF EXISTS indexer._ponder_checkpoint; DROP TABLE IF EXISTS indexer._ponder_meta;
    CREATE TABLE indexer._ponder_meta (key text PRIMARY KEY, value jsonb);
    INSERT INTO indexer._ponder_meta VALUES ('app', '{"is_ready": 1}');
    CREATE TABLE indexer._ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint NOT NULL, safe_checkpoint varchar(75) NOT NULL,
      latest_checkpoint varchar(75) NOT NULL, finalized_checkpoint varchar(75) NOT NULL);`);
  await sql.query(`INSERT INTO indexer._ponder_checkpoint VALUES ('bench', $1, $2, $2, $2)`, [chainId, checkpoint(BigInt(block))]);
  try {
    // A difference of a few percent drowns on a busy machine: the dataset's load itself raises the load for a minute.
    for (const deadline = Date.now() + 120_000; loadavg()[0]! >= 1.5 && Date.now() < deadline; ) await sleep(5_000);
    const rows: Row[] = [];
    const load = `load ${loadAverage()}`;
    for (const { name, path } of cases) {
      const plainUrl = `${stack.url}${path}`;
      const minBlockUrl = `${plainUrl}${path.includes('?') ? '&' : '?'}minBlock=${chainId}:${block}`;
      // Both answer 200 with the same body: the block is reached.
      if ((await httpGet(plainUrl)) !== (await httpGet(minBlockUrl))) throw new Error(`${name}: the read with minBlock differs from the read without it`);
      const run = (url: string) => measureInChild({ kind: 'http', url, concurrency, durationMs, postgresPid: stack.postgres?.pid });
      // ABBA twice: runs drift by more than the few percent measured (the instance warms), and the order cancels the drift.
      const plain: Figures[] = [];
      const withMinBlock: Figures[] = [];
      for (const order of ['plain', 'minBlock', 'minBlock', 'plain', 'plain', 'minBlock', 'minBlock', 'plain'] as const) {
        if (order === 'plain') plain.push(await run(plainUrl));
        else withMinBlock.push(await run(minBlockUrl));
      }
      const baselineName = `the same read without minBlock, ${plain.length} runs of each interleaved ABBA, concurrency ${concurrency}, ${load}`;
      rows.push({ name: `${name}, minBlock`, gateway: pooled(withMinBlock), baseline: pooled(plain), baselineName });
      console.log(
        `  ${name}: requests/s per run, without ${plain.map((f) => f.rps.toFixed(0)).join(' ')}; with ${withMinBlock.map((f) => f.rps.toFixed(0)).join(' ')}`,
      );
    }
    printTable(`minBlock already reached (${load}; the index's position read at most once per ${freshnessCacheMs} ms per instance)`, rows);
    const micros = await ownWorkMicros(block);
    // The load saturates the machine, so a request costs about cores / rps of its CPU.
    const shares = rows.map(
      (row) => `${((100 * micros * row.baseline.rps) / (cpus().length * 1e6)).toFixed(2)} % of a ${row.name.replace(/, minBlock$/, '')} request's`,
    );
    console.log(
      `minBlock's own work when reached: ${micros.toFixed(2)} µs of CPU a request (parse, compare with the cached position; load ${loadAverage()}): ${shares.join(', ')} ${cpus().length}-core machine time`,
    );
  } finally {
    await sql.query('DROP TABLE indexer._ponder_checkpoint; DROP TABLE indexer._ponder_meta');
  }
};
