import { describe, expect, it } from 'vitest';
import { activeListings, listingsModel, listingsSource } from '@hatchery/core/indexer/listings';
import { nftsModel } from '@hatchery/core/indexer/nfts';
import { itemSchema } from '@hatchery/core/query/item-schema';
import { buildPageStatements, pageQuerySchema } from '@hatchery/core/query/page-query';
import { pageStatements } from '@hatchery/core/query/paging';
import { listSource, type ItemOf } from '@hatchery/core/query/read-model';
import { openApiDocument } from '@hatchery/functions/openapi';
import { listListings } from '@hatchery/functions/routes/indexed';
import { pageSchema } from '@hatchery/functions/schemas';

/** A copy of the listings' declaration with one more field: the line a new field is. */
const extended = {
  ...listingsModel,
  fields: { ...listingsModel.fields, listedAt: { sql: 'l.listed_at', type: 'bigint', filter: true, description: 'Unix seconds.' } },
} as const;

const request = pageQuerySchema.parse({ filter: 'listedAt>5', orderBy: 'listedAt desc' });

describe('a read model declared once', () => {
  const source = listSource(extended);

  it('selects the new field, as text for a big integer', () => {
    expect(source.select).toContain('l.listed_at::text AS "listedAt"');
    const { page } = buildPageStatements(source, request);
    expect(page.text).toContain('l.listed_at::text AS "listedAt"');
    expect(page.text).toMatch(/WHERE .*l\.listed_at/);
    expect(page.text).toContain('ORDER BY l.listed_at DESC');
  });

  it('filters and sorts on it', () => {
    expect(source.fields.listedAt).toEqual({ sql: 'l.listed_at', type: 'bigint' });
    expect(Object.keys(source.fields)).toEqual([...Object.keys(listSource(listingsModel).fields), 'listedAt']);
  });

  it('carries it into the item', () => {
    // The row's values in select order, then its sort keys.
    const values = ['1', `0x${'a'.repeat(40)}`, '2', 'Active', '3', 'e', '', 1, 0, 'n', 4, 5, 6, '99', '99', '1'];
    const item: ItemOf<typeof extended.fields> = source.item(values) as ItemOf<typeof extended.fields>;
    expect(item.listedAt).toBe('99');
    expect(item.attributes).toEqual({ health: 4, skill: 5, morale: 6 });
    expect(itemSchema(extended).parse(item)).toEqual(item);
    expect(Object.keys(item)).toEqual(Object.keys(itemSchema(extended).shape));
  });

  it('documents it in the OpenAPI document, as the answer and as a filter field', () => {
    const document = openApiDocument({ listListings: { ...listListings, list: source } }, () => pageSchema(itemSchema(extended)));
    const get = document.paths['/marketplace/listings']!.get as {
      parameters: Array<{ name: string; 'x-fields'?: Record<string, string> }>;
      responses: Record<
        string,
        { content: Record<string, { schema: { properties: { items: { items: { properties: Record<string, unknown>; required: string[] } } } } }> }
      >;
    };
    const item = get.responses['200']!.content['application/json']!.schema.properties.items.items;
    expect(item.properties.listedAt).toMatchObject({ type: 'string', description: 'Unix seconds.' });
    expect(item.required).toContain('listedAt');
    expect(get.parameters.find((parameter) => parameter.name === 'filter')!['x-fields']!.listedAt).toBe('bigint');
  });

  it('makes the item from the row alone, leaving out what is NULL, a group included even when all of it is', () => {
    const nfts = listSource(nftsModel);
    expect(nfts.item(['7', null, null, null, null, '3', null, 'a', 1, 'n', false, '7'])).toEqual({
      tokenId: '7',
      attributes: {},
      editionId: '3',
      artUri: 'a',
      rarity: 1,
      nftName: 'n',
      staked: false,
    });
  });
});

describe('compiled statements', () => {
  it('are compiled once per list and query, and never shared by two queries', () => {
    const query = (raw: Record<string, string>) => pageQuerySchema.parse(raw);
    const first = pageStatements(listingsSource, query({ filter: 'rarity>1', orderBy: 'price' }), activeListings);
    expect(pageStatements(listingsSource, query({ filter: 'rarity>1', orderBy: 'price' }), activeListings)).toBe(first);
    expect(first.page).toEqual(buildPageStatements(listingsSource, query({ filter: 'rarity>1', orderBy: 'price' }), activeListings).page);
    const seen = pageStatements(listingsSource, query({ filter: 'rarity>1', orderBy: 'price', v: 'a' }), activeListings);
    expect(seen).not.toBe(first);
    expect(seen.countKey).not.toBe(first.countKey);
    expect(pageStatements(listingsSource, query({ filter: 'rarity>1', orderBy: 'price', pageSize: '5' }), activeListings)).not.toBe(first);
  });
});
