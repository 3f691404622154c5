import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listingFields, type ListingDto } from '@hatchery/core/indexer/listings';
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

const editions = [
  { edition_id: '1', name: 'alpha', art_uri: 'ipfs://alpha', health: 11, skill: 12, morale: 13, rarity: 1 },
  { edition_id: '2', name: 'bravo', art_uri: 'ipfs://bravo', health: 21, skill: 22, morale: 23, rarity: 3 },
  { edition_id: above64(3), name: 'charlie', art_uri: 'ipfs://charlie', health: 31, skill: 32, morale: 33, rarity: 1 },
].map((e) => ({ ...e, max_supply: '100', minted: '1', mint_start: '0', mint_end: '1', price: '1', distribution: 0, active: true }));

const nfts = [
  { token_id: '1', edition_id: '1', gender: 0 },
  { token_id: '2', edition_id: '2', gender: 1 },
  { token_id: '3', edition_id: above64(3), gender: 1 },
  { token_id: above64(5), edition_id: '2', gender: 1 },
  { token_id: '6', edition_id: '1', gender: 0 },
  { token_id: '7', edition_id: '1', gender: 0 },
].map((n) => ({ ...n, owner: alice, nft_name: `Hatchling #${n.token_id}`, staked: false, burned: false }));

/**
 * Token 3's listing has no edition of its own (the NFT's is used); token 4 has no NFT row at all.
 * Ties: tokens 1 and 2 were listed in the same block, tokens 1 and 3 have the same price.
 */
const listings = [
  { token_id: '1', seller: alice, price: '500', status: 'Active', edition_id: '1', listed_at_block: '100' },
  { token_id: '2', seller: bob, price: above64(7), status: 'Active', edition_id: '2', listed_at_block: '100' },
  { token_id: '3', seller: alice, price: '500', status: 'Active', edition_id: null, listed_at_block: '120' },
  { token_id: '4', seller: carol, price: '100', status: 'Active', edition_id: null, listed_at_block: '90' },
  { token_id: above64(5), seller: bob, price: '900', status: 'Active', edition_id: '2', listed_at_block: above64(0) },
  { token_id: '6', seller: alice, price: '300', status: 'Active', edition_id: '1', listed_at_block: '150' },
  { token_id: '7', seller: alice, price: '50', status: 'Cancelled', edition_id: '1', listed_at_block: '160' },
  { token_id: '8', seller: bob, price: '60', status: 'Sold', edition_id: '2', listed_at_block: '170' },
].map((l) => ({ ...l, updated_at_block: l.listed_at_block, tx_hash: `0x${'0'.repeat(63)}${l.token_id.slice(-1)}` }));

function toDto(listing: (typeof listings)[number]): ListingDto {
  const nft = nfts.find((n) => n.token_id === listing.token_id);
  const editionId = listing.edition_id ?? nft?.edition_id;
  const edition = editions.find((e) => e.edition_id === editionId);
  return {
    tokenId: listing.token_id,
    seller: listing.seller,
    price: listing.price,
    status: listing.status,
    editionId: editionId ?? '0',
    editionName: edition?.name ?? '',
    artUri: edition?.art_uri ?? '',
    rarity: edition?.rarity ?? 0,
    gender: nft?.gender ?? 0,
    nftName: nft?.nft_name ?? '',
    attributes: { health: edition?.health ?? 0, skill: edition?.skill ?? 0, morale: edition?.morale ?? 0 },
  };
}

const active = listings.filter((l) => l.status === 'Active').map(toDto);
const blockOf = (item: ListingDto) => listings.find((l) => l.token_id === item.tokenId)!.listed_at_block;

const contract = listContractCases<ListingDto>({
  path: '/marketplace/listings',
  visible: active,
  fields: listingFields,
  sortKeys: {
    tokenId: (l) => l.tokenId,
    seller: (l) => l.seller,
    price: (l) => l.price,
    status: (l) => l.status,
    editionId: (l) => l.editionId,
    editionName: (l) => l.editionName,
    rarity: (l) => l.rarity,
    gender: (l) => l.gender,
    listedAtBlock: blockOf,
  },
  defaultOrder: { field: 'listedAtBlock', direction: 'desc' },
  tieBreaker: { key: (l) => l.tokenId, direction: 'desc' },
  filters: [
    { field: 'tokenId', filter: `tokenId=${above64(5)}`, matches: (l) => l.tokenId === above64(5) },
    { field: 'tokenId', filter: 'tokenId<=3', matches: (l) => BigInt(l.tokenId) <= 3n },
    { field: 'seller', filter: `seller=${alice}`, matches: (l) => l.seller === alice },
    { field: 'seller', filter: `seller=${bob.toUpperCase().replace('0X', '0x')}/i`, matches: (l) => l.seller === bob },
    { field: 'price', filter: 'price>=500', matches: (l) => BigInt(l.price) >= 500n },
    { field: 'price', filter: `price=${above64(7)}`, matches: (l) => l.price === above64(7) },
    { field: 'status', filter: 'status=Active', matches: () => true, selectsAllOrNone: true },
    { field: 'status', filter: 'status=Cancelled', matches: () => false, selectsAllOrNone: true },
    { field: 'status', filter: 'status!=Active', matches: () => false, selectsAllOrNone: true },
    { field: 'editionId', filter: 'editionId=0', matches: (l) => l.editionId === '0' },
    { field: 'editionId', filter: `editionId=${above64(3)}`, matches: (l) => l.editionId === above64(3) },
    { field: 'editionName', filter: 'editionName=*rav', matches: (l) => l.editionName.includes('rav') },
    { field: 'editionName', filter: 'editionName=', matches: (l) => l.editionName === '' },
    { field: 'rarity', filter: 'rarity>0', matches: (l) => l.rarity > 0 },
    { field: 'gender', filter: 'gender=1', matches: (l) => l.gender === 1 },
    { field: 'listedAtBlock', filter: 'listedAtBlock>100', matches: (l) => BigInt(blockOf(l)) > 100n },
  ],
  unmappedField: 'updatedAtBlock',
});

describe('GET /marketplace/listings before the indexer has run', () => {
  it('answers an empty page', async () => {
    expect(await getPage(stack, '/marketplace/listings')).toEqual({ items: [], totalCount: 0, page: 1, pageSize: 20 });
  });
});

describe('GET /marketplace/listings', () => {
  beforeAll(async () => {
    await createSchema(stack);
    await insertRows(stack, 'editions', editions);
    await insertRows(stack, 'nfts', nfts);
    await insertRows(stack, 'listings', listings);
  });

  it('serves Active listings only: cancelled and sold never appear', async () => {
    const page = await getPage<ListingDto>(stack, '/marketplace/listings', { pageSize: '100' });
    expect(page.items.map((l) => l.tokenId).sort()).toEqual(['1', '2', '3', '4', '6', above64(5)].sort());
    expect(page.items.every((l) => l.status === 'Active')).toBe(true);
  });

  it('a status filter only narrows the server’s own condition', async () => {
    expect(await getPage(stack, '/marketplace/listings', { filter: 'status=Cancelled' })).toEqual({ items: [], totalCount: 0, page: 1, pageSize: 20 });
    expect((await getPage(stack, '/marketplace/listings', { filter: 'status=Sold|status=Active' })).totalCount).toBe(active.length);
  });

  it('orders by listedAtBlock desc by default; price and block above 2^64 stay exact strings', async () => {
    await contract.defaultOrder(stack);
    const page = await getPage<ListingDto>(stack, '/marketplace/listings', { pageSize: '2' });
    expect(page).toStrictEqual({
      items: [
        {
          tokenId: '18446744073709551621',
          seller: bob,
          price: '900',
          status: 'Active',
          editionId: '2',
          editionName: 'bravo',
          artUri: 'ipfs://bravo',
          rarity: 3,
          gender: 1,
          nftName: 'Hatchling #18446744073709551621',
          attributes: { health: 21, skill: 22, morale: 23 },
        },
        {
          tokenId: '6',
          seller: alice,
          price: '300',
          status: 'Active',
          editionId: '1',
          editionName: 'alpha',
          artUri: 'ipfs://alpha',
          rarity: 1,
          gender: 0,
          nftName: 'Hatchling #6',
          attributes: { health: 11, skill: 12, morale: 13 },
        },
      ],
      totalCount: 6,
      page: 1,
      pageSize: 2,
      nextCursor: expect.any(String),
    });
    const priced = await getPage<ListingDto>(stack, '/marketplace/listings', { filter: 'tokenId=2' });
    expect(priced.items[0]!.price).toBe('18446744073709551623');
  });

  it('fills missing NFT metadata with "", 0 and editionId "0"; takes the NFT’s edition when the listing has none', async () => {
    const page = await getPage<ListingDto>(stack, '/marketplace/listings', { filter: 'tokenId=4|tokenId=3', orderBy: 'tokenId' });
    expect(page.items).toStrictEqual([
      {
        tokenId: '3',
        seller: alice,
        price: '500',
        status: 'Active',
        editionId: '18446744073709551619',
        editionName: 'charlie',
        artUri: 'ipfs://charlie',
        rarity: 1,
        gender: 1,
        nftName: 'Hatchling #3',
        attributes: { health: 31, skill: 32, morale: 33 },
      },
      {
        tokenId: '4',
        seller: carol,
        price: '100',
        status: 'Active',
        editionId: '0',
        editionName: '',
        artUri: '',
        rarity: 0,
        gender: 0,
        nftName: '',
        attributes: { health: 0, skill: 0, morale: 0 },
      },
    ]);
  });

  it('filters on every mapped field', () => contract.everyFilterField(stack));

  it('sorts on every mapped field both ways, ties broken by tokenId desc', () => contract.everySortField(stack));

  it('pages over ties so that every listing appears exactly once', async () => {
    await contract.pagingWithTies(stack, 'price');
    await contract.pagingWithTies(stack, 'listedAtBlock');
  });

  it('rejects fields that are not mapped', () => contract.unmappedFields(stack));
});
