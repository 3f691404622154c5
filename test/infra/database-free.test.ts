import { describe, expect, it } from 'vitest';
import { httpRoutes, type HttpRouteName } from '@hatchery/functions/routes';
import { bundleMetafile } from './library-floor';

/**
 * The functions that never query the database: pg is CommonJS, so
 * esbuild keeps all of it (about 85 KB) once any module of the bundle imports
 * db.ts, even for one schema or list source the route table reads. The
 * descriptions live apart from the reads (core/query/page-query.ts beside
 * paging.ts, core/indexer/<list>.ts beside <list>-read.ts).
 */
const databaseFree = ['openApi', 'docs', 'docsAsset', 'preflight', 'notFound', 'negotiateHub'] as const satisfies readonly HttpRouteName[];

/** The first import chain from `entry` to a module `matches` accepts, or undefined. */
function chainTo(inputs: Record<string, { imports: { path: string }[] }>, entry: string, matches: (file: string) => boolean): string[] | undefined {
  const via = new Map<string, string | undefined>([[entry, undefined]]);
  for (const file of via.keys()) {
    if (matches(file)) {
      const chain = [file];
      for (let previous = via.get(file); previous; previous = via.get(previous)) chain.unshift(previous);
      return chain;
    }
    for (const { path } of inputs[file]?.imports ?? []) if (!via.has(path)) via.set(path, file);
  }
  return undefined;
}

describe('the functions that never query the database', () => {
  it.each(databaseFree)('%s bundles no database client', async (name) => {
    const entry = `${httpRoutes[name].handler.replace(/\.handler$/, '')}.ts`;
    const metafile = await bundleMetafile(entry);
    expect(chainTo(metafile.inputs, entry, (file) => file === 'packages/core/src/db.ts' || /node_modules\/pg\//.test(file))).toBeUndefined();
  });
});
