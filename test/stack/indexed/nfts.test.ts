import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nftFields, type NftItemDto } from '@hatchery/core/indexer/nfts';
import { startTestStack, type TestStack } from '../../support/stack';
import { above64, createSchema, expectValidationProblem, getPage, insertRows, listContractCases, mixedCase, wallet } from './support';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const alice = wallet('ab');
const bob = wallet('cd');

const editions = [
  { edition_id: '1', name: 'alpha', art_uri: 'ipfs://alpha', health: 11, skill: 12, morale: 13, rarity: 1 },
  { edition_id: '2', name: 'bravo', art_uri: 'ipfs://bravo', health: 21, skill: 22, morale: 23, rarity: 3 },
  { edition_id: above64(3), name: 'charlie', art_uri: 'ipfs://charlie', health: 31, skill: 32, morale: 33, rarity: 1 },
].map((e) => ({ ...e, max_supply: '100', minted: '1', mint_start: '0', mint_end: '1', price: '1', distribution: 0, active: true }));

/** Edition 99 is not indexed: its NFT is still listed, with "" and 0 for the edition's values. */
const nfts = [
  { token_id: '1', owner: alice, edition_id: '1', gender: 0, staked: false, burned: false },
  { token_id: '2', owner: alice, edition_id: '1', gender: 1, staked: true, burned: false },
  { token_id: '3', owner: alice, edition_id: '2', gender: 0, staked: false, burned: false },
  { token_id: '4', owner: alice, edition_id: '2', gender: 1, staked: false, burned: false },
  { token_id: '5', owner: alice, edition_id: above64(3), gender: 0, staked: true, burned: false },
  { token_id: '6', owner: alice, edition_id: '99', gender: 1, staked: false, burned: false },
  { token_id: '7', owner: alice, edition_id: '1', gender: 1, staked: false, burned: false },
  { token_id: above64(1), owner: alice, edition_id: '2', gender: 0, staked: false, burned: false },
  { token_id: above64(2), owner: alice, edition_id: above64(3), gender: 1, staked: true, burned: false },
  { token_id: '8', owner: alice, edition_id: '1', gender: 0, staked: false, burned: true },
  { token_id: '9', owner: alice, edition_id: '2', gender: 1, staked: true, burned: true },
  { token_id: '10', owner: bob, edition_id: '1', gender: 0, staked: false, burned: false },
  { token_id: '11', owner: bob, edition_id: '2', gender: 1, staked: true, burned: false },
].map((n) => ({ ...n, nft_name: `Hatchling #${n.token_id}` }));

function toDto(nft: (typeof nfts)[number]): NftItemDto {
  const edition = editions.find((e) => e.edition_id === nft.edition_id);
  return {
    tokenId: nft.token_id,
    attributes: { health: edition?.health ?? 0, skill: edition?.skill ?? 0, morale: edition?.morale ?? 0, gender: nft.gender },
    editionId: nft.edition_id,
    editionName: edition?.name ?? '',
    artUri: edition?.art_uri ?? '',
    rarity: edition?.rarity ?? 0,
    nftName: nft.nft_name,
    staked: nft.staked,
  };
}

const alicesNfts = nfts.filter((n) => n.owner === alice && !n.burned).map(toDto);

const contract = listContractCases<NftItemDto>({
  path: `/accounts/${mixedCase(alice)}/nfts`,
  visible: alicesNfts,
  fields: nftFields,
  sortKeys: {
    tokenId: (n) => n.tokenId,
    editionId: (n) => n.editionId,
    editionName: (n) => n.editionName,
    rarity: (n) => n.rarity,
    gender: (n) => n.attributes.gender,
    staked: (n) => n.staked,
  },
  defaultOrder: { field: 'tokenId', direction: 'desc' },
  tieBreaker: { key: (n) => n.tokenId, direction: 'desc' },
  filters: [
    { field: 'tokenId', filter: `tokenId=${above64(1)}`, matches: (n) => n.tokenId === above64(1) },
    { field: 'tokenId', filter: 'tokenId>5', matches: (n) => BigInt(n.tokenId) > 5n },
    { field: 'editionId', filter: `editionId=${above64(3)}`, matches: (n) => n.editionId === above64(3) },
    { field: 'editionName', filter: 'editionName=bravo', matches: (n) => n.editionName === 'bravo' },
    { field: 'editionName', filter: 'editionName^CH/i', matches: (n) => n.editionName.startsWith('ch') },
    { field: 'rarity', filter: 'rarity=1', matches: (n) => n.rarity === 1 },
    { field: 'rarity', filter: 'rarity<1', matches: (n) => n.rarity < 1 },
    { field: 'gender', filter: 'gender=1', matches: (n) => n.attributes.gender === 1 },
    { field: 'staked', filter: 'staked=true', matches: (n) => n.staked },
    { field: 'staked', filter: '(staked=false,rarity=1)|editionId=99', matches: (n) => (!n.staked && n.rarity === 1) || n.editionId === '99' },
  ],
  unmappedField: 'owner',
});

describe('GET /accounts/{address}/nfts before the indexer has run', () => {
  it('answers an empty page', async () => {
    expect(await getPage(stack, `/accounts/${alice}/nfts`)).toEqual({ items: [], totalCount: 0, page: 1, pageSize: 20 });
  });
});

describe('GET /accounts/{address}/nfts', () => {
  beforeAll(async () => {
    await createSchema(stack);
    await insertRows(stack, 'editions', editions);
    await insertRows(stack, 'nfts', nfts);
  });

  it("lists the owner's NFTs, staked included and burned never, matching a mixed-case address", async () => {
    const page = await getPage<NftItemDto>(stack, `/accounts/${mixedCase(alice)}/nfts`, { pageSize: '100' });
    const tokenIds = page.items.map((n) => n.tokenId);
    expect(new Set(tokenIds)).toEqual(new Set(alicesNfts.map((n) => n.tokenId)));
    expect(tokenIds).toEqual(expect.arrayContaining(['2', '5', above64(2)]));
    expect(tokenIds).not.toContain('8');
    expect(tokenIds).not.toContain('9');
    expect(tokenIds).not.toContain('10');
    expect((await getPage<NftItemDto>(stack, `/accounts/${bob.toUpperCase().replace('0X', '0x')}/nfts`)).items.map((n) => n.tokenId)).toEqual(['11', '10']);
  });

  it('orders by tokenId desc by default and serializes NftItemDto exactly, big integers as exact strings', async () => {
    await contract.defaultOrder(stack);
    const page = await getPage<NftItemDto>(stack, `/accounts/${alice}/nfts`, { pageSize: '2' });
    expect(page).toStrictEqual({
      items: [
        {
          tokenId: '18446744073709551618',
          attributes: { health: 31, skill: 32, morale: 33, gender: 1 },
          editionId: '18446744073709551619',
          editionName: 'charlie',
          artUri: 'ipfs://charlie',
          rarity: 1,
          nftName: 'Hatchling #18446744073709551618',
          staked: true,
        },
        {
          tokenId: '18446744073709551617',
          attributes: { health: 21, skill: 22, morale: 23, gender: 0 },
          editionId: '2',
          editionName: 'bravo',
          artUri: 'ipfs://bravo',
          rarity: 3,
          nftName: 'Hatchling #18446744073709551617',
          staked: false,
        },
      ],
      totalCount: 9,
      page: 1,
      pageSize: 2,
      nextCursor: expect.any(String),
    });
  });

  it('gives "" and 0 for the values of an edition that is not indexed', async () => {
    const page = await getPage<NftItemDto>(stack, `/accounts/${alice}/nfts`, { filter: 'tokenId=6' });
    expect(page.items).toStrictEqual([
      {
        tokenId: '6',
        attributes: { health: 0, skill: 0, morale: 0, gender: 1 },
        editionId: '99',
        editionName: '',
        artUri: '',
        rarity: 0,
        nftName: 'Hatchling #6',
        staked: false,
      },
    ]);
  });

  it('filters on every mapped field, within the owner and never reaching burned NFTs', async () => {
    await contract.everyFilterField(stack);
    expect((await getPage(stack, `/accounts/${alice}/nfts`, { filter: 'tokenId=8' })).totalCount).toBe(0);
  });

  it('sorts on every mapped field both ways, ties broken by tokenId desc', () => contract.everySortField(stack));

  it('sorts on two fields', async () => {
    const page = await getPage<NftItemDto>(stack, `/accounts/${alice}/nfts`, { orderBy: 'rarity desc, gender asc', pageSize: '4' });
    expect(page.items.map((n) => n.tokenId)).toEqual([above64(1), '3', '4', '5']);
  });

  it('pages over ties so that every NFT appears exactly once', () => contract.pagingWithTies(stack, 'editionId'));

  it('rejects fields that are not mapped', () => contract.unmappedFields(stack));

  it('rejects an invalid address with a 422 naming address', async () => {
    await expectValidationProblem(stack, '/accounts/0x1234/nfts', {}, 'address');
    await expectValidationProblem(stack, `/accounts/${alice.slice(0, -1)}g/nfts`, {}, 'address');
  });
});
