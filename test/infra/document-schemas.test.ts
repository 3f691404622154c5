import { describe, expect, it } from 'vitest';
import { httpRoutes } from '@hatchery/functions/routes';
import { fanOutHandler, wsRoutes } from '@hatchery/functions/routes/realtime';
import { bundleMetafile, importChain } from './library-floor';

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
  file === 'packages/functions/src/responses.ts' ||
  file === 'packages/functions/src/problem-schema.ts';

describe('the schemas only the OpenAPI document reads', () => {
  it.each([...Object.values(httpRoutes).map((route) => route.handler), ...wsRoutes.map((route) => route.handler), fanOutHandler])(
    'are in no bundle of %s',
    async (handler) => {
      const entry = `${handler.replace(/\.handler$/, '')}.ts`;
      const metafile = await bundleMetafile(entry);
      expect(importChain(metafile.inputs, entry, documentOnly)).toBeUndefined();
    },
  );
});
