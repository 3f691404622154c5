import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await createIndexerSchema({ query: (text: string) => stack.sql(text) } as never);
});
afterAll(() => stack?.stop());

describe('GET /editions', () => {
  it('smoke', async () => {
    const response = await stack.get('/editions');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ items: [], totalCount: 0, page: 1, pageSize: 20 });
  });
});
