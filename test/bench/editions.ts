import { editionsSource } from '@hatchery/core/indexer/editions';
import { pageQuerySchema } from '@hatchery/core/query/page-query';
import type { BenchSection } from './context';
import { measureInChild, printTable, type Row } from './measure';
import { countedOffsetPageStatement } from './counted-offset-page';

/** GET /editions through the local gateway beside the counted offset page sent straight through pg; both loads in their own processes. */
export const editionsBench: BenchSection = async ({ stack, concurrency, durationMs }) => {
  const cases: Array<{ name: string; query: Record<string, string> }> = [
    { name: 'GET /editions (default page)', query: {} },
    { name: 'GET /editions filter+orderBy pageSize=100', query: { filter: 'active=true', orderBy: 'rarity desc', pageSize: '100' } },
  ];
  const rows: Row[] = [];
  for (const { name, query } of cases) {
    const url = `${stack.url}/editions?${new URLSearchParams(query)}`;
    const statement = countedOffsetPageStatement(editionsSource, pageQuerySchema.parse(query));
    const gateway = await measureInChild({ kind: 'http', url, concurrency, durationMs, postgresPid: stack.postgres?.pid });
    const baseline = await measureInChild({
      kind: 'sql',
      databaseUrl: stack.databaseUrl,
      statement,
      concurrency,
      durationMs,
      postgresPid: stack.postgres?.pid,
    });
    rows.push({
      name,
      gateway,
      baseline,
      baselineName: `the counted offset page (page and exact count in one) as raw SQL through pg, concurrency ${concurrency}`,
    });
  }
  printTable('Editions', rows);
};
