import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stakingFields, type StakingPairDto } from '@hatchery/core/indexer/staking';
import { startTestStack, type TestStack } from '../../support/stack';
import { above64, createSchema, expectValidationProblem, getPage, insertRows, listContractCases, mixedCase, wallet } from './support';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const alice = wallet('ab');
const bob = wallet('cd');

/** Pairs 1 and 2 were staked at the same time; pair 5 was unstaked and must never appear. */
const pairs = [
  { pair_id: '1', staker: alice, male_id: '10', female_id: '11', matched: true, staked_at: '100', last_claim_at: '150', status: 'Staked' },
  { pair_id: '2', staker: alice, male_id: '20', female_id: '21', matched: false, staked_at: '100', last_claim_at: '120', status: 'Staked' },
  { pair_id: '3', staker: alice, male_id: above64(30), female_id: above64(31), matched: true, staked_at: '300', last_claim_at: above64(9), status: 'Staked' },
  { pair_id: above64(4), staker: alice, male_id: '40', female_id: '41', matched: false, staked_at: '200', last_claim_at: '200', status: 'Staked' },
  { pair_id: '5', staker: alice, male_id: '50', female_id: '51', matched: true, staked_at: '250', last_claim_at: '260', status: 'Unstaked' },
  { pair_id: '6', staker: alice, male_id: '60', female_id: '61', matched: true, staked_at: '90', last_claim_at: '95', status: 'Staked' },
  { pair_id: '7', staker: bob, male_id: '70', female_id: '71', matched: true, staked_at: '500', last_claim_at: '500', status: 'Staked' },
];

const toDto = (p: (typeof pairs)[number]): StakingPairDto => ({
  pairId: p.pair_id,
  maleId: p.male_id,
  femaleId: p.female_id,
  matched: p.matched,
  stakedAt: p.staked_at,
  lastClaimAt: p.last_claim_at,
  status: p.status,
});

const alicesPairs = pairs.filter((p) => p.staker === alice && p.status === 'Staked').map(toDto);

const contract = listContractCases<StakingPairDto>({
  path: `/accounts/${mixedCase(alice)}/staking`,
  visible: alicesPairs,
  fields: stakingFields,
  sortKeys: {
    status: (p) => p.status,
    matched: (p) => p.matched,
    pairId: (p) => p.pairId,
    stakedAt: (p) => p.stakedAt,
    lastClaimAt: (p) => p.lastClaimAt,
  },
  defaultOrder: { field: 'stakedAt', direction: 'desc' },
  tieBreaker: { key: (p) => p.pairId, direction: 'desc' },
  filters: [
    { field: 'status', filter: 'status=Staked', matches: () => true, selectsAllOrNone: true },
    { field: 'status', filter: 'status=Unstaked', matches: () => false, selectsAllOrNone: true },
    { field: 'matched', filter: 'matched=true', matches: (p) => p.matched },
    { field: 'matched', filter: 'matched!=true', matches: (p) => !p.matched },
    { field: 'pairId', filter: `pairId=${above64(4)}`, matches: (p) => p.pairId === above64(4) },
    { field: 'pairId', filter: 'pairId<3', matches: (p) => BigInt(p.pairId) < 3n },
    { field: 'stakedAt', filter: 'stakedAt>=200', matches: (p) => BigInt(p.stakedAt) >= 200n },
    { field: 'lastClaimAt', filter: `lastClaimAt>${above64(0)}`, matches: (p) => BigInt(p.lastClaimAt) > 2n ** 64n },
  ],
  unmappedField: 'staker',
});

describe('GET /accounts/{address}/staking before the indexer has run', () => {
  it('answers an empty page', async () => {
    expect(await getPage(stack, `/accounts/${alice}/staking`)).toEqual({ items: [], totalCount: 0, page: 1, pageSize: 20 });
  });
});

describe('GET /accounts/{address}/staking', () => {
  beforeAll(async () => {
    await createSchema(stack);
    await insertRows(stack, 'staking_pairs', pairs);
  });

  it("serves the staker's Staked pairs only, matching a mixed-case address; unstaked pairs never appear", async () => {
    const page = await getPage<StakingPairDto>(stack, `/accounts/${mixedCase(alice)}/staking`, { pageSize: '100' });
    expect(page.items.map((p) => p.pairId).sort()).toEqual(['1', '2', '3', '6', above64(4)].sort());
    expect((await getPage(stack, `/accounts/${alice}/staking`, { filter: 'pairId=5' })).totalCount).toBe(0);
    expect((await getPage<StakingPairDto>(stack, `/accounts/${bob}/staking`)).items.map((p) => p.pairId)).toEqual(['7']);
  });

  it('orders by stakedAt desc by default and serializes StakingPairDto exactly, big integers as strings', async () => {
    await contract.defaultOrder(stack);
    const page = await getPage<StakingPairDto>(stack, `/accounts/${alice}/staking`, { pageSize: '1' });
    expect(page).toStrictEqual({
      items: [
        {
          pairId: '3',
          maleId: '18446744073709551646',
          femaleId: '18446744073709551647',
          matched: true,
          stakedAt: '300',
          lastClaimAt: '18446744073709551625',
          status: 'Staked',
        },
      ],
      totalCount: 5,
      page: 1,
      pageSize: 1,
      nextCursor: expect.any(String),
    });
  });

  it('filters on every mapped field', () => contract.everyFilterField(stack));

  it('sorts on every mapped field both ways, ties broken by pairId desc', () => contract.everySortField(stack));

  it('pages over ties so that every pair appears exactly once', async () => {
    await contract.pagingWithTies(stack, 'stakedAt');
    await contract.pagingWithTies(stack, 'matched');
  });

  it('rejects fields that are not mapped', () => contract.unmappedFields(stack));

  it('rejects an invalid address with a 422 naming address', () => expectValidationProblem(stack, '/accounts/alice/staking', {}, 'address'));
});
