import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { editionsSource } from '@hatchery/core/indexer/editions';
import { keyColumn } from '@hatchery/core/query/cursor';
import { buildPageStatements, pageQuerySchema, type PageStatements } from '@hatchery/core/query/page-query';
import { bundleOf, type Bundle } from '../support/bundles';
import { buildHandler } from './sst/build-handler';
import { repositoryRoot } from './sst/platform';

/**
 * What infra/functions.ts's lambda() gives sst.aws.Function as `nodejs`, which
 * the component hands the CLI's build as is (BuildInput.properties).
 */
export const functionBuild = { format: 'esm', minify: true } as const;

/** Where a bundle's source or output must be for Node's resolution to find this repository's node_modules. */
export const insideNodeModules = (name: string) => join(repositoryRoot, 'node_modules', '.cache', 'hatchery-bench', name);

export const pgOnlyBaselineSummary =
  "GET /editions' default page (core's statements: the page, and its count while more rows follow) through pg alone, returned as JSON";

/** The statements core's editions list runs for the default page, on the indexer schema `schema` (the environment's when undefined). */
export function editionsPageStatements(schema: string | undefined): PageStatements {
  const saved = process.env.INDEXER_SCHEMA;
  // The list's table names the schema from the environment when its SQL is built (core/indexer/names.ts).
  if (schema !== undefined) process.env.INDEXER_SCHEMA = schema;
  try {
    return buildPageStatements(editionsSource, pageQuerySchema.parse({}));
  } finally {
    if (saved === undefined) delete process.env.INDEXER_SCHEMA;
    else process.env.INDEXER_SCHEMA = saved;
  }
}

/** A handler that reads one page as core's readPage does (the page, then its count while more rows follow), with pg alone. */
function pgOnlySource(statements: PageStatements, page: number, pageSize: number): string {
  const spec = {
    page: statements.page,
    count: statements.count,
    pageNumber: page,
    pageSize,
    keyColumns: statements.terms.map((_term, index) => keyColumn(index)),
  };
  return `import pg from 'pg';
const { page, count, pageNumber, pageSize, keyColumns } = ${JSON.stringify(spec)};
let pool;
export async function handler() {
  pool ??= new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  const { rows } = await pool.query(page.text, page.values);
  const more = rows.length > pageSize;
  const items = more ? rows.slice(0, pageSize) : rows;
  for (const row of items) for (const key of keyColumns) delete row[key];
  const totalCount = more ? Number((await pool.query(count.text, count.values)).rows[0].total_count) : (pageNumber - 1) * pageSize + items.length;
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items, totalCount, page: pageNumber, pageSize }) };
}
`;
}

/**
 * The pg-only baseline of the cold-start table: a bundle, built as the
 * functions are, of a handler that runs GET /editions' default page with pg
 * alone. Its source is written inside node_modules (so that esbuild finds pg
 * there) and removed; the bundle goes to `outdir`, away from any node_modules,
 * as a function's does in Lambda.
 */
export async function buildPgOnlyBaseline(
  outdir: string,
  indexerSchema: string | undefined,
): Promise<{ file: string; exportName: string; taskRoot: string; bundle: Bundle }> {
  const request = pageQuerySchema.parse({});
  const source = insideNodeModules(`pg-only-${process.pid}-${Date.now()}`);
  mkdirSync(source, { recursive: true });
  try {
    writeFileSync(join(source, 'pg-only.mjs'), pgOnlySource(editionsPageStatements(indexerSchema), request.page, request.pageSize));
    const built = await buildHandler(source, outdir, { functionID: 'PgOnly', handler: 'pg-only.handler', runtime: 'nodejs24.x', properties: functionBuild });
    if (built.errors.length) throw new Error(`pg-only baseline: ${built.errors.join('; ')}`);
    const file = join(built.out, 'pg-only.mjs');
    return { file, exportName: 'handler', taskRoot: built.out, bundle: bundleOf(file) };
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
}
