import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack';
import { createIndexerSchema, dropIndexerSchema } from '@hatchery/core/indexer/schema';

let stack: TestStack;
const big = '18446744073709551621'; // 2^64 + 5

interface Edition {
  id: string;
  rarity: number;
  active: boolean;
  price: string;
  [key: string]: unknown;
}

const editionCount = 23;
/** rarity = n % 4 gives ties on the sort key; every third edition is inactive; the last id is above 2^64. */
const fixture = Array.from({ length: editionCount }, (_, i) => {
  const n = i + 1;
  return { id: n === editionCount ? big : String(n), n, rarity: n % 4, active: n % 3 !== 0, price: n === 7 ? big : String(n * 1000) };
});
const byId = (a: { id: string }, b: { id: string }) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1);

async function loadFixture() {
  await createIndexerSchema({ query: (text: string) => stack.sql(text) } as never);
  for (const edition of fixture) {
    await stack.sql(`INSERT INTO indexer.editions VALUES ($1, $2, $3, 10, 20, 30, $4, $5, 5, 100, 200, $6, 1, $7)`, [
      edition.id,
      `Edition ${edition.n}`,
      `ipfs://e/${edition.n}`,
      edition.rarity,
      edition.n === 7 ? big : '1000',
      edition.price,
      edition.active,
    ]);
  }
}

async function getJson(path: string, init?: RequestInit) {
  const response = await stack.get(path, init);
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
}

beforeAll(async () => {
  stack = await startTestStack({ env: { CORS_ORIGINS: 'https://app.hatchery.test', CORS_ALLOWED_HOST_SUFFIXES: '.games.test' } });
  await loadFixture();
});
afterAll(() => stack?.stop());

describe('GET /editions', () => {
  it('filters, orders and pages: active=true, rarity desc, pageSize 5', async () => {
    const { status, headers, body } = await getJson(`/editions?filter=active=true&orderBy=${encodeURIComponent('rarity desc')}&pageSize=5`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('application/json');
    const expected = fixture
      .filter((e) => e.active)
      .sort((a, b) => b.rarity - a.rarity || byId(a, b))
      .slice(0, 5)
      .map((e) => e.id);
    expect(body.items.map((e: Edition) => e.id)).toEqual(expected);
    expect(body.totalCount).toBe(fixture.filter((e) => e.active).length);
    expect(body.page).toBe(1);
    expect(body.pageSize).toBe(5);
  });

  it('orders by id ascending by default and serializes every field of EditionDto', async () => {
    const { body } = await getJson('/editions?pageSize=100');
    expect(body.items.map((e: Edition) => e.id)).toEqual(fixture.map((e) => e.id));
    expect(body.items[6]).toEqual({
      id: '7',
      name: 'Edition 7',
      artUri: 'ipfs://e/7',
      health: 10,
      skill: 20,
      morale: 30,
      rarity: 3,
      maxSupply: big,
      minted: '5',
      mintStart: '100',
      mintEnd: '200',
      price: big,
      distribution: 1,
      active: true,
    });
  });

  it('returns every row exactly once across all pages, even with ties on the sort key', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 5; page++) {
      const { body } = await getJson(`/editions?pageSize=5&page=${page}&orderBy=rarity`);
      expect(body.totalCount).toBe(editionCount);
      seen.push(...body.items.map((e: Edition) => e.id));
    }
    expect(seen).toHaveLength(editionCount);
    expect(new Set(seen).size).toBe(editionCount);
  });

  it('applies big-integer comparisons exactly above 2^64', async () => {
    const { body } = await getJson(`/editions?filter=${encodeURIComponent('id>18446744073709551620')}`);
    expect(body.items.map((e: Edition) => e.id)).toEqual([big]);
    const { body: below } = await getJson(`/editions?filter=${encodeURIComponent('id<=18446744073709551620')}&pageSize=100`);
    expect(below.totalCount).toBe(editionCount - 1);
  });

  it('answers an unmapped filter field with 422 naming filter, as problem+json', async () => {
    const { status, headers, body } = await getJson('/editions?filter=burned=true');
    expect(status).toBe(422);
    expect(headers.get('content-type')).toBe('application/problem+json');
    expect(body).toMatchObject({ status: 422, title: 'Validation failed', instance: '/editions' });
    expect(Object.keys(body.errors)).toEqual(['filter']);
  });

  it.each([
    ['pageSize=101', 'pageSize'],
    ['pageSize=0', 'pageSize'],
    ['page=0', 'page'],
    ['page=201', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    [`orderBy=${encodeURIComponent('price desc')}`, 'orderBy'],
    [`filter=${'a'.repeat(501)}`, 'filter'],
  ])('answers %s with 422 naming %s', async (query, field) => {
    const { status, body } = await getJson(`/editions?${query}`);
    expect(status).toBe(422);
    expect(Object.keys(body.errors)).toEqual([field]);
  });

  it('never leaks SQL or a stack trace, even for hostile input', async () => {
    const response = await stack.get(`/editions?filter=${encodeURIComponent("name=x'; DROP TABLE indexer.editions; --")}`);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toMatch(/SELECT|indexer\.|at .*\.ts/);
    const [row] = await stack.sql<{ count: string }>('SELECT count(*) FROM indexer.editions');
    expect(Number(row?.count)).toBe(editionCount);
  });

  it('sends CORS headers only to allowed origins', async () => {
    const allowed = ['https://app.hatchery.test', 'https://games.test', 'https://a.games.test'];
    for (const origin of allowed) {
      const response = await stack.get('/editions', { headers: { origin } });
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    }
    for (const origin of ['https://evil.test', 'https://badgames.test', 'null']) {
      const response = await stack.get('/editions', { headers: { origin } });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    }
    const preflight = await stack.get('/editions', {
      method: 'OPTIONS',
      headers: { origin: 'https://a.games.test', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://a.games.test');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
  });

  it('answers an unknown path with a problem+json 404', async () => {
    const { status, body } = await getJson('/no/such/thing');
    expect(status).toBe(404);
    expect(body).toMatchObject({ status: 404, instance: '/no/such/thing' });
  });

  it('answers 503 while the database is down and recovers by itself', async () => {
    await stack.postgres!.stop();
    try {
      const { status, headers, body } = await getJson('/editions');
      expect(status).toBe(503);
      expect(headers.get('content-type')).toBe('application/problem+json');
      expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    } finally {
      await stack.postgres!.start();
    }
    const { status, body } = await getJson('/editions');
    expect(status).toBe(200);
    expect(body.totalCount).toBe(editionCount);
  });

  it('answers an empty page when the indexer schema is missing', async () => {
    await dropIndexerSchema({ query: (text: string) => stack.sql(text) } as never);
    try {
      const { status, body } = await getJson('/editions?filter=active=true');
      expect(status).toBe(200);
      expect(body).toEqual({ items: [], totalCount: 0, page: 1, pageSize: 20 });
      // Validation still applies with no table to read.
      expect((await getJson('/editions?filter=burned=true')).status).toBe(422);
    } finally {
      await loadFixture();
    }
  });
});

describe('GET /openapi.json and /docs', () => {
  it('documents /editions with its paging parameters and EditionDto', async () => {
    const { status, body } = await getJson('/openapi.json');
    expect(status).toBe(200);
    expect(body.openapi).toBe('3.1.0');
    const operation = body.paths['/editions'].get;
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(['page', 'pageSize', 'filter', 'orderBy', 'after', 'v', 'minBlock']);
    const item = operation.responses['200'].content['application/json'].schema.properties.items.items;
    expect(Object.keys(item.properties)).toEqual([
      'id',
      'name',
      'artUri',
      'health',
      'skill',
      'morale',
      'rarity',
      'maxSupply',
      'minted',
      'mintStart',
      'mintEnd',
      'price',
      'distribution',
      'active',
    ]);
    expect(operation.responses['422'].content['application/problem+json']).toBeDefined();
  });

  it('serves a docs page that reads the document (Swagger UI, whose files the stack serves too)', async () => {
    const response = await stack.get('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const page = await response.text();
    expect(page).toContain("url: 'openapi.json'");
    for (const file of [...page.matchAll(/(?:src|href)="(docs\/[^"]+)"/g)].map((match) => match[1]!)) {
      expect((await stack.get(`/${file}`)).status, file).toBe(200);
    }
    expect((await stack.get('/docs/', { redirect: 'manual' })).headers.get('location')).toBe('../docs');
    expect((await stack.get('/docs/package.json')).status).toBe(404);
  });
});
