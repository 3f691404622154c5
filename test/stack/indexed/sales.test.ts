import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleFields, type SaleDto } from '@hatchery/core/indexer/sales';
import { startTestStack, type TestStack } from '../../support/stack';
import { above64, createSchema, getPage, insertRows, listContractCases, wallet } from './support';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const alice = wallet('ab');
const bob = wallet('cd');
const carol = wallet('ef');

/** Three sales in block 100 tie on the default key; token 1 was sold twice. */
const sales = [
  { id: 's01', token_id: '1', seller: alice, buyer: bob, price: '100', platform_fee: '2', royalty: '5', block_number: '100' },
  { id: 's02', token_id: '2', seller: bob, buyer: alice, price: above64(7), platform_fee: above64(1), royalty: '3', block_number: '100' },
  { id: 's03', token_id: '1', seller: bob, buyer: carol, price: '150', platform_fee: '3', royalty: '7', block_number: '110' },
  { id: 's04', token_id: above64(4), seller: carol, buyer: alice, price: '200', platform_fee: '4', royalty: above64(2), block_number: above64(0) },
  { id: 's05', token_id: '5', seller: alice, buyer: carol, price: '90', platform_fee: '1', royalty: '4', block_number: '120' },
  { id: 's06', token_id: '6', seller: alice, buyer: bob, price: '300', platform_fee: '6', royalty: '15', block_number: '100' },
];

const toDto = (s: (typeof sales)[number]): SaleDto => ({
  tokenId: s.token_id,
  seller: s.seller,
  buyer: s.buyer,
  price: s.price,
  platformFee: s.platform_fee,
  royalty: s.royalty,
  blockNumber: s.block_number,
});

const visible = sales.map(toDto);
/** The sale's primary key, the tie-breaker; the DTO does not carry it. */
const idOf = (sale: SaleDto) => sales[visible.indexOf(sale)]!.id;

const contract = listContractCases<SaleDto>({
  path: '/transparency/sales',
  visible,
  fields: saleFields,
  sortKeys: { seller: (s) => s.seller, buyer: (s) => s.buyer, tokenId: (s) => s.tokenId, blockNumber: (s) => s.blockNumber },
  defaultOrder: { field: 'blockNumber', direction: 'desc' },
  tieBreaker: { key: idOf, direction: 'desc' },
  filters: [
    { field: 'seller', filter: `seller=${alice}`, matches: (s) => s.seller === alice },
    { field: 'buyer', filter: `buyer=${carol}|buyer=${bob}`, matches: (s) => s.buyer === carol || s.buyer === bob },
    { field: 'tokenId', filter: 'tokenId=1', matches: (s) => s.tokenId === '1' },
    { field: 'tokenId', filter: `tokenId>=${above64(0)}`, matches: (s) => BigInt(s.tokenId) >= 2n ** 64n },
    { field: 'blockNumber', filter: 'blockNumber=100', matches: (s) => s.blockNumber === '100' },
    { field: 'blockNumber', filter: `(blockNumber>100,seller!=${carol})`, matches: (s) => BigInt(s.blockNumber) > 100n && s.seller !== carol },
  ],
  unmappedField: 'price',
});

describe('GET /transparency/sales before the indexer has run', () => {
  it('answers an empty page', async () => {
    expect(await getPage(stack, '/transparency/sales')).toEqual({ items: [], totalCount: 0, page: 1, pageSize: 20 });
  });
});

describe('GET /transparency/sales', () => {
  beforeAll(async () => {
    await createSchema(stack);
    await insertRows(stack, 'sales', sales);
  });

  it('orders by blockNumber desc by default and serializes SaleDto exactly, amounts above 2^64 as exact strings', async () => {
    await contract.defaultOrder(stack);
    const page = await getPage<SaleDto>(stack, '/transparency/sales', { pageSize: '2', page: '2' });
    expect(page).toStrictEqual({
      items: [
        { tokenId: '1', seller: bob, buyer: carol, price: '150', platformFee: '3', royalty: '7', blockNumber: '110' },
        { tokenId: '6', seller: alice, buyer: bob, price: '300', platformFee: '6', royalty: '15', blockNumber: '100' },
      ],
      totalCount: 6,
      page: 2,
      pageSize: 2,
      nextCursor: expect.any(String),
    });
    const first = await getPage<SaleDto>(stack, '/transparency/sales', { pageSize: '1' });
    expect(first.items).toStrictEqual([
      {
        tokenId: '18446744073709551620',
        seller: carol,
        buyer: alice,
        price: '200',
        platformFee: '4',
        royalty: '18446744073709551618',
        blockNumber: '18446744073709551616',
      },
    ]);
  });

  it('filters on every mapped field', () => contract.everyFilterField(stack));

  it('sorts on every mapped field both ways, ties broken by the sale id', () => contract.everySortField(stack));

  it('pages over ties so that every sale appears exactly once', async () => {
    await contract.pagingWithTies(stack, 'blockNumber');
    await contract.pagingWithTies(stack, 'seller');
  });

  it('answers an empty page past the end, still with the total', async () => {
    expect(await getPage(stack, '/transparency/sales', { page: '200', pageSize: '100' })).toEqual({ items: [], totalCount: 6, page: 200, pageSize: 100 });
  });

  it('rejects fields that are not mapped', () => contract.unmappedFields(stack));
});
