import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgeRequestFields, type ForgeRequestDto } from '@hatchery/core/indexer/forge-requests';
import { startTestStack, type TestStack } from '../../support/stack';
import { above64, createSchema, expectValidationProblem, getJson, getPage, insertRows, listContractCases, mixedCase, wallet } from './support';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const alice = wallet('ab');
const bob = wallet('cd');

const requests = [
  { request_id: '1', buyer: alice, tier: 1, status: 'Requested', token_id: null, edition_id: null, block_number: '100', fulfilled_at_block: null },
  { request_id: '2', buyer: alice, tier: 2, status: 'Fulfilled', token_id: above64(20), edition_id: '3', block_number: '110', fulfilled_at_block: '111' },
  { request_id: '3', buyer: alice, tier: 1, status: 'Cancelled', token_id: null, edition_id: null, block_number: '120', fulfilled_at_block: null },
  {
    request_id: above64(4),
    buyer: alice,
    tier: 3,
    status: 'Fulfilled',
    token_id: '40',
    edition_id: above64(41),
    block_number: above64(0),
    fulfilled_at_block: above64(1),
  },
  { request_id: '5', buyer: alice, tier: 2, status: 'Requested', token_id: null, edition_id: null, block_number: '130', fulfilled_at_block: null },
  { request_id: '6', buyer: alice, tier: 1, status: 'Fulfilled', token_id: '60', edition_id: '6', block_number: '140', fulfilled_at_block: '141' },
  { request_id: '7', buyer: bob, tier: 1, status: 'Fulfilled', token_id: '70', edition_id: '7', block_number: '150', fulfilled_at_block: '151' },
];

const toDto = (r: (typeof requests)[number]): ForgeRequestDto => ({
  requestId: r.request_id,
  tier: r.tier,
  status: r.status,
  ...(r.token_id !== null && { tokenId: r.token_id }),
  ...(r.edition_id !== null && { editionId: r.edition_id }),
  blockNumber: r.block_number,
});

const alicesRequests = requests.filter((r) => r.buyer === alice).map(toDto);

const contract = listContractCases<ForgeRequestDto>({
  path: `/accounts/${mixedCase(alice)}/forge-requests`,
  visible: alicesRequests,
  fields: forgeRequestFields,
  sortKeys: { status: (r) => r.status, tier: (r) => r.tier, requestId: (r) => r.requestId },
  defaultOrder: { field: 'requestId', direction: 'desc' },
  tieBreaker: { key: (r) => r.requestId, direction: 'desc' },
  filters: [
    { field: 'status', filter: 'status=Fulfilled', matches: (r) => r.status === 'Fulfilled' },
    { field: 'status', filter: 'status!=Fulfilled', matches: (r) => r.status !== 'Fulfilled' },
    { field: 'tier', filter: 'tier>=2', matches: (r) => r.tier >= 2 },
    { field: 'requestId', filter: 'requestId=5', matches: (r) => r.requestId === '5' },
    { field: 'requestId', filter: `requestId=${above64(4)}`, matches: (r) => r.requestId === above64(4) },
  ],
  unmappedField: 'buyer',
});

describe('GET /accounts/{address}/forge-requests before the indexer has run', () => {
  it('answers an empty page', async () => {
    expect(await getPage(stack, `/accounts/${alice}/forge-requests`)).toEqual({ items: [], totalCount: 0, page: 1, pageSize: 20 });
  });
});

describe('GET /accounts/{address}/forge-requests', () => {
  beforeAll(async () => {
    await createSchema(stack);
    await insertRows(stack, 'forge_requests', requests);
  });

  it("serves the buyer's requests in every status, matching a mixed-case address", async () => {
    const page = await getPage<ForgeRequestDto>(stack, `/accounts/${mixedCase(alice)}/forge-requests`, { pageSize: '100' });
    expect(new Set(page.items.map((r) => r.status))).toEqual(new Set(['Requested', 'Fulfilled', 'Cancelled']));
    expect(page.totalCount).toBe(6);
    expect((await getPage<ForgeRequestDto>(stack, `/accounts/${bob}/forge-requests`)).items.map((r) => r.requestId)).toEqual(['7']);
  });

  it('orders by requestId desc by default; tokenId and editionId are absent until fulfilled (no nulls on the wire)', async () => {
    await contract.defaultOrder(stack);
    const response = await stack.get(`/accounts/${alice}/forge-requests?pageSize=3`);
    const text = await response.text();
    expect(text).not.toContain('null');
    expect(JSON.parse(text)).toStrictEqual({
      items: [
        {
          requestId: '18446744073709551620',
          tier: 3,
          status: 'Fulfilled',
          tokenId: '40',
          editionId: '18446744073709551657',
          blockNumber: '18446744073709551616',
        },
        { requestId: '6', tier: 1, status: 'Fulfilled', tokenId: '60', editionId: '6', blockNumber: '140' },
        { requestId: '5', tier: 2, status: 'Requested', blockNumber: '130' },
      ],
      totalCount: 6,
      page: 1,
      pageSize: 3,
      nextCursor: expect.any(String),
    });
  });

  it('filters on every mapped field', () => contract.everyFilterField(stack));

  it('sorts on every mapped field both ways, ties broken by requestId desc', () => contract.everySortField(stack));

  it('pages over ties so that every request appears exactly once', async () => {
    await contract.pagingWithTies(stack, 'tier');
    await contract.pagingWithTies(stack, 'status');
  });

  it('rejects fields that are not mapped, and values of the wrong type', async () => {
    await contract.unmappedFields(stack);
    await expectValidationProblem(stack, `/accounts/${alice}/forge-requests`, { filter: 'tier=high' }, 'filter');
    await expectValidationProblem(stack, `/accounts/${alice}/forge-requests`, { filter: 'requestId=1.5' }, 'filter');
  });

  it('rejects an invalid address and bad paging with 422s naming the field', async () => {
    await expectValidationProblem(stack, '/accounts/0xZZ00000000000000000000000000000000000000/forge-requests', {}, 'address');
    await expectValidationProblem(stack, `/accounts/${alice}/forge-requests`, { pageSize: '101' }, 'pageSize');
    const { status } = await getJson(stack, `/accounts/${alice}/forge-requests`, { page: '201' });
    expect(status).toBe(422);
  });
});
