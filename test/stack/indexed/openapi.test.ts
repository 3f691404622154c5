import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexedRoutes } from '@hatchery/functions/routes/indexed';
import { startTestStack, type TestStack } from '../../support/stack';
import { getJson } from './support';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

/** The DTO fields docs/http-api.md lists, per endpoint (item fields for the paged ones). */
const documented: Record<keyof typeof indexedRoutes, { paged: boolean; address: boolean; fields: string[]; required: string[] }> = {
  listEditions: {
    paged: true,
    address: false,
    fields: ['id', 'name', 'artUri', 'health', 'skill', 'morale', 'rarity', 'maxSupply', 'minted', 'mintStart', 'mintEnd', 'price', 'distribution', 'active'],
    required: ['id', 'name', 'artUri', 'health', 'skill', 'morale', 'rarity', 'maxSupply', 'minted', 'mintStart', 'mintEnd', 'price', 'distribution', 'active'],
  },
  listAccountNfts: {
    paged: true,
    address: true,
    fields: ['tokenId', 'attributes', 'editionId', 'editionName', 'artUri', 'rarity', 'nftName', 'staked'],
    required: ['tokenId', 'attributes', 'editionId', 'editionName', 'artUri', 'rarity', 'nftName', 'staked'],
  },
  listListings: {
    paged: true,
    address: false,
    fields: ['tokenId', 'seller', 'price', 'status', 'editionId', 'editionName', 'artUri', 'rarity', 'gender', 'nftName', 'attributes'],
    required: ['tokenId', 'seller', 'price', 'status', 'editionId', 'editionName', 'artUri', 'rarity', 'gender', 'nftName', 'attributes'],
  },
  listAccountStaking: {
    paged: true,
    address: true,
    fields: ['pairId', 'maleId', 'femaleId', 'matched', 'stakedAt', 'lastClaimAt', 'status'],
    required: ['pairId', 'maleId', 'femaleId', 'matched', 'stakedAt', 'lastClaimAt', 'status'],
  },
  listAccountForgeRequests: {
    paged: true,
    address: true,
    fields: ['requestId', 'tier', 'status', 'tokenId', 'editionId', 'blockNumber'],
    required: ['requestId', 'tier', 'status', 'blockNumber'],
  },
  getAccountReferral: {
    paged: false,
    address: true,
    fields: ['code', 'upline', 'referralCount', 'pending', 'totalAccrued', 'totalClaimed'],
    required: ['referralCount', 'pending', 'totalAccrued', 'totalClaimed'],
  },
  listSales: {
    paged: true,
    address: false,
    fields: ['tokenId', 'seller', 'buyer', 'price', 'platformFee', 'royalty', 'blockNumber'],
    required: ['tokenId', 'seller', 'buyer', 'price', 'platformFee', 'royalty', 'blockNumber'],
  },
  getSummary: {
    paged: false,
    address: false,
    fields: ['salesCount', 'totalVolume', 'nftCount', 'editionCount', 'totalTokenTransferred'],
    required: ['salesCount', 'totalVolume', 'nftCount', 'editionCount', 'totalTokenTransferred'],
  },
};

describe('/openapi.json', () => {
  it('documents the eight indexed endpoints with their parameters, schemas and problems', async () => {
    const { status, body } = await getJson(stack, '/openapi.json');
    expect(status).toBe(200);
    for (const [name, route] of Object.entries(indexedRoutes)) {
      const expected = documented[name as keyof typeof indexedRoutes];
      const operation = body.paths[route.path]?.get;
      expect(operation, route.path).toBeDefined();
      expect(operation.operationId).toBe(name);
      expect(operation.security).toEqual([]);
      const parameters = operation.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort();
      expect(parameters, route.path).toEqual(
        [
          ...(expected.address ? ['path:address'] : []),
          ...(expected.paged ? ['query:after', 'query:filter', 'query:orderBy', 'query:page', 'query:pageSize', 'query:v'] : []),
          'query:minBlock',
        ].sort(),
      );
      const schema = operation.responses['200'].content['application/json'].schema;
      const item = expected.paged ? schema.properties.items.items : schema;
      if (expected.paged) expect(Object.keys(schema.properties).sort()).toEqual(['items', 'nextCursor', 'page', 'pageSize', 'totalCount']);
      expect(Object.keys(operation.responses['200'].headers ?? {}), route.path).toEqual(['X-Indexed-Block', 'X-Safe-Block', 'X-Finalized-Block']);
      expect(Object.keys(item.properties), route.path).toEqual(expected.fields);
      expect([...item.required].sort(), route.path).toEqual([...expected.required].sort());
      expect(Object.keys(operation.responses).sort()).toEqual(
        // Every one takes minBlock (422 when malformed, 409 while not indexed yet).
        ['200', '409', '422', '500', '503'].sort(),
      );
    }
  });
});
