import { editionsSource } from '@hatchery/core/indexer/editions';
import { buildPageQuery, pageQuerySchema } from '@hatchery/core/query/paging';
import type { BenchSection } from './context';
import { httpGet, measure, printTable, type Row } from './measure';

/** GET /editions through the local gateway beside the same statement sent straight through pg. */
export const editionsBench: BenchSection = async ({ stack, sql, concurrency, durationMs }) => {
  const cases: Array<{ name: string; query: Record<string, string> }> = [
    { name: 'GET /editions (default page)', query: {} },
    { name: 'GET /editions filter+orderBy pageSize=100', query: { filter: 'active=true', orderBy: 'rarity desc', pageSize: '100' } },
  ];
  const rows: Row[] = [];
  for (const { name, query } of cases) {
    const url = `${stack.url}/editions?${new URLSearchParams(query)}`;
    const statement = buildPageQuery(editionsSource, pageQuerySchema.parse(query));
    const gateway = await measure(() => httpGet(url), { concurrency, durationMs });
    const baseline = await measure(() => sql.query(statement), { concurrency, durationMs });
    rows.push({ name, gateway, baseline, baselineName: `raw SQL through pg, same statement, concurrency ${concurrency}` });
  }
  printTable('Editions', rows);
};
