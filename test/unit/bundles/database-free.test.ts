import { describe, expect, it } from 'vitest';
import { httpRoutes, type HttpRouteName } from '@hatchery/functions/routes';
import { handlerImportChain } from '../../deploy/library-floor';

/**
 * The functions that never query the database: pg is CommonJS, so
 * esbuild keeps all of it (about 85 KB) once any module of the bundle imports
 * db.ts, even for one schema or list source the route table reads. The
 * descriptions live apart from the reads (core/query/page-query.ts beside
 * paging.ts, core/indexer/<list>.ts beside <list>-read.ts).
 */
const databaseFree = ['openApi', 'docs', 'docsAsset', 'preflight', 'notFound', 'negotiateHub'] as const satisfies readonly HttpRouteName[];

describe('the functions that never query the database', () => {
  it.each(databaseFree)('%s bundles no database client', async (name) => {
    const chain = await handlerImportChain(httpRoutes[name].handler, (file) => file === 'packages/core/src/db.ts' || /node_modules\/pg\//.test(file));
    expect(chain).toBeUndefined();
  });
});
