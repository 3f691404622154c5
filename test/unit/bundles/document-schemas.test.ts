import { describe, expect, it } from 'vitest';
import { functionHandlers, handlerImportChain } from '../../deploy/library-floor';

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

describe('the schemas only the OpenAPI document reads', () => {
  it.each(functionHandlers)('are in no bundle of %s', async (handler) => {
    expect(await handlerImportChain(handler, documentOnly)).toBeUndefined();
  });
});
