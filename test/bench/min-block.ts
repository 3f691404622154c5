import { limits } from '@hatchery/core/limits';
import { loadAverage, type BenchSection } from './context';
import { httpGet, measureInChild, printTable, type Row } from './measure';

const chainId = 31337;

/** Ponder's checkpoint string (75 digits) for the end of `block`. */
const checkpoint = (block: bigint) =>
  `${String(Math.floor(Date.now() / 1000)).padStart(10, '0')}${String(chainId).padStart(16, '0')}${String(block).padStart(16, '0')}${'9'.repeat(16)}9${'9'.repeat(16)}`;

const cases = [
  { name: 'editions (default page)', path: '/editions?pageSize=20' },
  { name: 'sales (default page, 1M rows)', path: '/transparency/sales' },
];

/**
 * A list read with a `minBlock` the index has already reached, beside the same
 * read without it, in the same run (issue 33: at most 5 % of throughput). The
 * bench dataset has no Ponder, so the section writes Ponder's checkpoint
 * tables for its own runs, at the highest block of the sales, and drops them
 * after. Each pair runs twice, plain first then the other way round, so a
 * drift of the machine shows as a difference between the two.
 */
export const minBlockBench: BenchSection = async ({ stack, sql, concurrency, durationMs }) => {
  const [{ block }] = (await sql.query<{ block: string }>('SELECT coalesce(max(block_number), 0)::text AS block FROM indexer.sales')).rows as [{ block: string }];
  await sql.query(`CREATE TABLE indexer._ponder_meta (key text PRIMARY KEY, value jsonb);
    INSERT INTO indexer._ponder_meta VALUES ('app', '{"is_ready": 1}');
    CREATE TABLE indexer._ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint NOT NULL, safe_checkpoint varchar(75) NOT NULL,
      latest_checkpoint varchar(75) NOT NULL, finalized_checkpoint varchar(75) NOT NULL);`);
  await sql.query(`INSERT INTO indexer._ponder_checkpoint VALUES ('bench', $1, $2, $2, $2)`, [chainId, checkpoint(BigInt(block))]);
  try {
    const rows: Row[] = [];
    const load = `load ${loadAverage()}`;
    for (const { name, path } of cases) {
      const plainUrl = `${stack.url}${path}`;
      const minBlockUrl = `${plainUrl}${path.includes('?') ? '&' : '?'}minBlock=${chainId}:${block}`;
      // Both answer 200 with the same body: the block is reached.
      if ((await httpGet(plainUrl)) !== (await httpGet(minBlockUrl))) throw new Error(`${name}: the read with minBlock differs from the read without it`);
      const run = (url: string) => measureInChild({ kind: 'http', url, concurrency, durationMs, postgresPid: stack.postgres?.pid });
      const plainFirst = await run(plainUrl);
      const withFirst = await run(minBlockUrl);
      const withSecond = await run(minBlockUrl);
      const plainSecond = await run(plainUrl);
      const baselineName = `the same read without minBlock, concurrency ${concurrency}, ${load}`;
      rows.push({ name: `${name}, minBlock (1)`, gateway: withFirst, baseline: plainFirst, baselineName });
      rows.push({ name: `${name}, minBlock (2)`, gateway: withSecond, baseline: plainSecond, baselineName });
    }
    printTable(`minBlock already reached (${load}; the index's position read at most once per ${limits.freshnessCacheMs} ms per instance)`, rows);
  } finally {
    await sql.query('DROP TABLE indexer._ponder_checkpoint; DROP TABLE indexer._ponder_meta');
  }
};
