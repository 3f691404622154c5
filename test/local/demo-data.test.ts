import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleWallet } from '@hatchery/functions/schemas';
import { demoAddress, demoSizes } from '@hatchery/local/demo-data';
import { startTestStack, type TestStack } from '../support/stack';

/** Issue 12 item 7: the README's demo-data table and its example requests are true of `npm start`'s data. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ demoData: demoSizes.demo });
});
afterAll(() => stack?.stop());

const total = async (path: string) => ((await (await stack.get(path)).json()) as { totalCount: number }).totalCount;
const wallet = (n: number, rest: string) => `/accounts/${demoAddress(n)}/${rest}`;

describe('demo data', () => {
  it('is what the README’s table says', async () => {
    expect(await total(wallet(1, 'nfts'))).toBe(0);
    expect(await stack.sql(`SELECT count(*)::int AS n FROM indexer.nfts WHERE owner = $1 AND burned`, [demoAddress(1)])).toEqual([{ n: 100 }]);
    expect(await total(wallet(2, 'nfts'))).toBe(100);
    expect(await total(wallet(2, 'nfts?filter=staked=true'))).toBe(0);
    expect(await total(wallet(11, 'nfts'))).toBe(100);
    expect(await total(wallet(11, 'nfts?filter=staked=true'))).toBe(100);
    for (const n of [1, 2, 11]) expect(await total(wallet(n, 'staking'))).toBe(8);
    for (const n of [1, 2, 11]) {
      expect(await total(wallet(n, 'forge-requests'))).toBe(16);
      expect(await total(wallet(n, 'forge-requests?filter=status=Fulfilled'))).toBe(8);
    }
    expect(await total(wallet(1, 'forge-requests?filter=status=Requested'))).toBe(8);
    expect(await total(wallet(11, 'forge-requests?filter=status=Requested'))).toBe(8);
    expect(await (await stack.get(wallet(1, 'referral'))).json()).toMatchObject({ code: '100001', referralCount: 4 });
    expect(await (await stack.get(wallet(2, 'referral'))).json()).toMatchObject({ code: '100002', referralCount: 4 });
    expect(await (await stack.get(wallet(11, 'referral'))).json()).toMatchObject({ upline: demoAddress(2), referralCount: 0 });
    expect(await (await stack.get('/transparency/summary')).json()).toEqual(expect.objectContaining({ salesCount: 2000, nftCount: 4800, editionCount: 40 }));
    expect(await total('/editions?filter=active=true')).toBe(27);
    expect(await total('/marketplace/listings')).toBe(700);
  });

  it('the explorer’s example wallet is wallet 11', () => {
    expect(exampleWallet).toBe(demoAddress(11));
  });

  it('every public curl example of the README answers 200 with something in it', async () => {
    const readme = await readFile(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
    const examples = [...readme.matchAll(/^curl '(http:\/\/127\.0\.0\.1:3000\/[^']+)'$/gm)].map((match) => match[1]!);
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const example of examples) {
      const response = await fetch(example.replace('http://127.0.0.1:3000', stack.url));
      expect(response.status, example).toBe(200);
      const body = (await response.json()) as { items?: unknown[] };
      if (body.items) expect(body.items.length, example).toBeGreaterThan(0);
    }
  });
});
