import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { getPathsFile, getPathsModule } from '../../packages/functions/scripts/generate-get-paths';

describe('the GET paths not-found.ts redirects to', () => {
  it('are the route table’s, as `npm run generate -w @hatchery/functions` writes them', async () => {
    expect(await readFile(getPathsFile, 'utf8')).toBe(getPathsModule());
  });

  it('would change with the table: a new GET route is a new line', () => {
    const module = getPathsModule({
      extra: { method: 'GET', path: '/extra/{id}', handler: 'packages/functions/src/http/extra.handler', auth: 'none', summary: 'x' },
      posted: { method: 'POST', path: '/posted', handler: 'packages/functions/src/http/posted.handler', auth: 'none', summary: 'x' },
    });
    expect(module).toContain("  '/extra/{id}',\n");
    expect(module).not.toContain('/posted');
  });
});
