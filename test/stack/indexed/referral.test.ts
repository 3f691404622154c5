import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack';
import { above64, createSchema, expectValidationProblem, getJson, insertRows, mixedCase, wallet } from './support';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const alice = wallet('ab');
const bob = wallet('cd');
const carol = wallet('ef');
const dave = wallet('12');
const erin = wallet('34');
const frank = wallet('56');

async function getReferral(address: string) {
  const response = await stack.get(`/accounts/${address}/referral`);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(text).not.toContain('null');
  return JSON.parse(text);
}

describe('GET /accounts/{address}/referral before the indexer has run', () => {
  it('answers zeros, with no code and no upline', async () => {
    expect(await getReferral(alice)).toStrictEqual({ referralCount: 0, pending: '0', totalAccrued: '0', totalClaimed: '0' });
  });
});

describe('GET /accounts/{address}/referral', () => {
  beforeAll(async () => {
    await createSchema(stack);
    await insertRows(stack, 'referral_registrations', [
      { referrer: alice, code: above64(100), block_number: '10' },
      { referrer: bob, code: '7', block_number: '5' },
    ]);
    await insertRows(stack, 'referral_links', [
      { buyer: alice, referrer: bob, block_number: '11' },
      { buyer: carol, referrer: alice, block_number: '12' },
      { buyer: dave, referrer: alice, block_number: '13' },
      { buyer: erin, referrer: alice, block_number: '14' },
    ]);
    await insertRows(stack, 'referral_bnb_accruals', [
      { id: 'a1', referrer: alice, buyer: carol, amount: above64(1), block_number: '20' },
      { id: 'a2', referrer: alice, buyer: dave, amount: above64(2), block_number: '21' },
      { id: 'a3', referrer: alice, buyer: erin, amount: '500', block_number: '22' },
      { id: 'a4', referrer: bob, buyer: alice, amount: '70', block_number: '23' },
    ]);
    await insertRows(stack, 'referral_bnb_claims', [
      { id: 'c1', referrer: alice, amount: '300', block_number: '30' },
      { id: 'c2', referrer: alice, amount: '100', block_number: '31' },
      { id: 'c3', referrer: bob, amount: '70', block_number: '32' },
    ]);
  });

  it('aggregates code, upline, referred count and the three amounts exactly, beyond 64 bits', async () => {
    const accrued = 2n * 2n ** 64n + 3n + 500n;
    expect(await getReferral(mixedCase(alice))).toStrictEqual({
      code: '18446744073709551716',
      upline: bob,
      referralCount: 3,
      pending: (accrued - 400n).toString(),
      totalAccrued: accrued.toString(),
      totalClaimed: '400',
    });
    expect(accrued > 2n ** 65n).toBe(true);
  });

  it('omits the upline of a referrer nobody referred, and keeps a zero pending balance', async () => {
    expect(await getReferral(bob)).toStrictEqual({ code: '7', referralCount: 1, pending: '0', totalAccrued: '70', totalClaimed: '70' });
  });

  it('omits the code of a referred buyer who never registered', async () => {
    expect(await getReferral(carol)).toStrictEqual({ upline: alice, referralCount: 0, pending: '0', totalAccrued: '0', totalClaimed: '0' });
  });

  it('answers zeros without code or upline for an address that never took part', async () => {
    expect(await getReferral(frank)).toStrictEqual({ referralCount: 0, pending: '0', totalAccrued: '0', totalClaimed: '0' });
  });

  it('rejects an invalid address with a 422 naming address', async () => {
    await expectValidationProblem(stack, '/accounts/0xabc/referral', {}, 'address');
    const { status } = await getJson(stack, `/accounts/${alice}0/referral`);
    expect(status).toBe(422);
  });
});
