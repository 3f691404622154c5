import { describe, expect, it } from 'vitest';
import { httpRoutes, type HttpRouteName } from '@hatchery/functions/routes';
import { functionHandlers, handlerImportChain } from '../../deploy/library-floor';

/*
 * What each function's bundle must never take, found on the import graph esbuild resolves as SST builds the
 * functions (test/deploy/library-floor.ts): one build of every handler serves each rule.
 */

/**
 * Schemas only the OpenAPI document, the client's types and the tests read:
 * what each route answers, a paged read's item, the freshness, the problem
 * body. A function that bundled one would build it at every cold start, for
 * nothing: esbuild keeps every statement that calls zod in a module the
 * bundle takes anything from (docs/deploying.md, "Function sizes and cold
 * starts").
 */
const documentOnly = (file: string) =>
  /^packages\/core\/src\/indexer\/[a-z-]+-schema\.ts$/.test(file) ||
  file === 'packages/core/src/query/item-schema.ts' ||
  file === 'packages/functions/src/responses.ts' ||
  file === 'packages/functions/src/problem-schema.ts';

/**
 * The functions that never query the database: pg is CommonJS, so
 * esbuild keeps all of it (about 85 KB) once any module of the bundle imports
 * db.ts, even for one schema or list source the route table reads. The
 * descriptions live apart from the reads (core/query/page-query.ts beside
 * paging.ts, core/indexer/<list>.ts beside <list>-read.ts).
 */
const databaseFree = ['openApi', 'docs', 'docsAsset', 'preflight', 'notFound', 'negotiateHub'] as const satisfies readonly HttpRouteName[];

describe('the schemas only the OpenAPI document reads', () => {
  it.each(functionHandlers)('are in no bundle of %s', async (handler) => {
    expect(await handlerImportChain(handler, documentOnly)).toBeUndefined();
  });
});

describe('the functions that never query the database', () => {
  it.each(databaseFree)('%s bundles no database client', async (name) => {
    const chain = await handlerImportChain(httpRoutes[name].handler, (file) => file === 'packages/core/src/db.ts' || /node_modules\/pg\//.test(file));
    expect(chain).toBeUndefined();
  });
});

describe('the settings, by group', () => {
  // A function that imported the whole configuration would build every group's schemas at each cold start.
  it.each(functionHandlers)('%s bundles the groups it reads, never the whole configuration', async (handler) => {
    expect(await handlerImportChain(handler, (file) => file === 'packages/platform/src/config.ts')).toBeUndefined();
  });
});
