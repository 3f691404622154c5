import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '@hatchery/functions/openapi';
import { openApiJson } from '@hatchery/functions/openapi-json';
import { getPathsFile, getPathsModule, openApiJsonFile, openApiJsonModule } from '../../../packages/functions/scripts/generate';

describe('the modules generated from the route table (npm run generate -w @hatchery/functions)', () => {
  it('list the GET paths not-found.ts redirects to, as the table has them', async () => {
    expect(await readFile(getPathsFile, 'utf8'), 'run npm run generate -w @hatchery/functions').toBe(getPathsModule());
  });

  it('hold the OpenAPI document the openapi function answers, as the table builds it', async () => {
    expect(await readFile(openApiJsonFile, 'utf8'), 'run npm run generate -w @hatchery/functions').toBe(openApiJsonModule());
    expect(JSON.parse(openApiJson)).toEqual(openApiDocument());
  });

  it('would change with the table: a new GET route is a new path, a POST none', () => {
    const module = getPathsModule({
      extra: { method: 'GET', path: '/extra/{id}', handler: 'packages/functions/src/http/extra.handler', auth: 'none', summary: 'x' },
      posted: { method: 'POST', path: '/posted', handler: 'packages/functions/src/http/posted.handler', auth: 'none', summary: 'x' },
    });
    expect(module).toContain("  '/extra/{id}',\n");
    expect(module).not.toContain('/posted');
  });
});
