import type pg from 'pg';
import { forgeRequestsSource, requestedBy } from '@hatchery/core/indexer/forge-requests';
import { activeListings, listingsSource } from '@hatchery/core/indexer/listings';
import { nftsSource, ownedNfts } from '@hatchery/core/indexer/nfts';
import { salesSource } from '@hatchery/core/indexer/sales';
import { stakedBy, stakingSource } from '@hatchery/core/indexer/staking';
import type { Params } from '@hatchery/core/query/compile';
import { buildPageStatements, pageQuerySchema, type ListSource } from '@hatchery/core/query/page-query';
import { demoAddress } from '@hatchery/local/demo-data';
import type { BenchSection } from './context';
import { httpGet, measureInChild, printTable, type Row } from './measure';
import { countedOffsetPageStatement } from './counted-offset-page';
import { countCacheLimits } from '@hatchery/core/query/count-cache';

interface Case {
  name: string;
  path: string;
  query: Record<string, string>;
  source: ListSource;
  serverConditions?: (params: Params) => string[];
  /** Scoped to one wallet: its plan must not scan a large table sequentially. */
  scoped: boolean;
  /** The goal: at least this many times the throughput of the counted offset page (counted-offset-page.ts). */
  goal?: number;
}

/** A demo wallet with hex letters in it, requested in mixed case where the address is a path value; it has a page of every wallet list. */
export const wallet = demoAddress(0xabc);
const mixedCase = `0x${wallet.slice(2).toUpperCase()}`;

const cases: Case[] = [
  {
    name: 'nfts of a wallet (default page)',
    path: `/accounts/${mixedCase}/nfts`,
    query: {},
    source: nftsSource,
    serverConditions: ownedNfts(wallet),
    scoped: true,
  },
  {
    name: 'nfts filter+orderBy pageSize=100',
    path: `/accounts/${wallet}/nfts`,
    query: { filter: 'staked=false,rarity>=1', orderBy: 'editionName desc', pageSize: '100' },
    source: nftsSource,
    serverConditions: ownedNfts(wallet),
    scoped: true,
  },
  {
    name: 'listings (default page, 140k active)',
    path: '/marketplace/listings',
    query: {},
    source: listingsSource,
    serverConditions: activeListings,
    scoped: false,
    goal: 20,
  },
  {
    name: 'listings of one seller',
    path: '/marketplace/listings',
    query: { filter: `seller=${wallet}` },
    source: listingsSource,
    serverConditions: activeListings,
    scoped: true,
  },
  { name: 'staking of a wallet', path: `/accounts/${wallet}/staking`, query: {}, source: stakingSource, serverConditions: stakedBy(wallet), scoped: true },
  {
    name: 'forge requests of a wallet',
    path: `/accounts/${wallet}/forge-requests`,
    query: {},
    source: forgeRequestsSource,
    serverConditions: requestedBy(wallet),
    scoped: true,
  },
  { name: 'sales (default page, 1M rows)', path: '/transparency/sales', query: {}, source: salesSource, scoped: false, goal: 20 },
  { name: 'sales of one buyer', path: '/transparency/sales', query: { filter: `buyer=${wallet}` }, source: salesSource, scoped: true },
  { name: 'sales page 200 x 100', path: '/transparency/sales', query: { page: '200', pageSize: '100' }, source: salesSource, scoped: false },
];

/** Tables with many rows: a scoped page must reach them through an index. */
const largeTables = ['nfts', 'listings', 'sales', 'staking_pairs', 'forge_requests'];

async function planCheck(sql: pg.Pool, statements: Array<{ text: string; values: unknown[] }>): Promise<string> {
  const plan: string[] = [];
  for (const statement of statements) {
    const { rows } = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.text}`, statement.values);
    plan.push(...rows.map((row) => row['QUERY PLAN']));
  }
  const seqScans = plan.filter((line) => largeTables.some((table) => new RegExp(`Seq Scan on ${table}\\b`).test(line)));
  if (seqScans.length) throw new Error(`sequential scan of a large table in a scoped page:\n${plan.join('\n')}`);
  const scans = new Set(
    plan.flatMap((line) => /(?:Index Scan|Index Only Scan)(?: Backward)? using (\w+)|Bitmap Index Scan on (\w+)/.exec(line)?.slice(1).filter(Boolean) ?? []),
  );
  return [...scans].join(', ');
}

/**
 * Every list endpoint through the local gateway beside the counted offset page
 * (counted-offset-page.ts) sent straight through pg, at the same concurrency. Both loads run in a process of their own.
 */
export const indexedBench: BenchSection = async ({ stack, concurrency, durationMs, sql }) => {
  const rows: Row[] = [];
  const plans: string[] = [];
  const goals: string[] = [];
  // PostgreSQL's CPU per request is measured when the cluster is the embedded one.
  const postgresPid = stack.postgres?.pid;
  for (const { name, path, query, source, serverConditions, scoped, goal } of cases) {
    const url = `${stack.url}${path}?${new URLSearchParams(query)}`;
    const request = pageQuerySchema.parse(query);
    const statements = buildPageStatements(source, request, serverConditions);
    if (scoped) plans.push(`  ${name.padEnd(44)} ${await planCheck(sql, [statements.page, statements.count])}`);
    const body = JSON.parse(await httpGet(url)) as { items: unknown[]; totalCount: number };
    if (!body.items.length) throw new Error(`${name}: the bench dataset gives an empty page`);
    const gateway = await measureInChild({ kind: 'http', url, concurrency, durationMs, postgresPid });
    const baseline = await measureInChild({
      kind: 'sql',
      databaseUrl: stack.databaseUrl,
      statement: countedOffsetPageStatement(source, request, serverConditions),
      concurrency,
      durationMs,
      postgresPid,
    });
    rows.push({
      name: `${name} (${body.totalCount})`,
      gateway,
      baseline,
      baselineName: `the counted offset page (page and exact count in one) as raw SQL through pg, concurrency ${concurrency}`,
    });
    if (goal) {
      const database =
        gateway.databaseMsPerRequest && baseline.databaseMsPerRequest
          ? `; PostgreSQL CPU per request ${(baseline.databaseMsPerRequest / gateway.databaseMsPerRequest).toFixed(1)}x less`
          : '';
      goals.push(
        `  ${name.padEnd(44)} ${(gateway.rps / baseline.rps).toFixed(1)}x the counted offset page's throughput (goal ${goal}x: ${gateway.rps >= goal * baseline.rps ? 'met' : 'NOT met'})${database}`,
      );
    }
  }
  printTable('Indexed data (list endpoints; load generators in their own processes)', rows);
  console.log(`Goals of the indexed reads (counts shared for ${countCacheLimits.ttlMs / 1000} s per instance):\n${goals.join('\n')}`);
  console.log(`Indexes used by the wallet-scoped pages and their counts (EXPLAIN; no sequential scan of ${largeTables.join(', ')}):\n${plans.join('\n')}`);
};
