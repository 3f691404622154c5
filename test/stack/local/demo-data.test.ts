import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAddress, demoChainId, demoSizes, latestBlockSql } from '@hatchery/local/demo-data';
import { commandLines, docBlock, onStack, parseDoc, runShell, where } from '../../support/docs';
import { startTestStack, type TestStack } from '../../support/stack';

/** The demo-data table of docs/local-stack.md and every public curl example of README.md and docs/ are true of `npm start`'s data. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ demoData: demoSizes.demo });
});
afterAll(() => stack?.stop());

const total = async (path: string) => ((await (await stack.get(path)).json()) as { totalCount: number }).totalCount;
const wallet = (n: number, rest: string) => `/accounts/${demoAddress(n)}/${rest}`;

describe('demo data', () => {
  it('is described by docs/local-stack.md as this test checks it', () => {
    const page = parseDoc('docs/local-stack.md').text.replace(/\s+/g, ' ');
    for (const text of [
      'There are 50 of them, 40 editions (27 active), 5,000 NFTs (200 burned), 1,000 listings (700 active), 2,000 sales, 600 staking pairs and 800 forge requests.',
      '| 1 `0x…01` | none: its 100 NFTs are all burned | 8 staked pairs | 16 (8 `Fulfilled`, 8 `Requested`) | referrer, code `100001`, 4 referrals |',
      '| 2 `0x…02` | 100, none staked | 8 staked pairs | 16 (8 `Fulfilled`) | referrer, code `100002`, 4 referrals |',
      '| 11 `0x…0b` | 100, all staked | 8 staked pairs | 16 (8 `Fulfilled`, 8 `Requested`) | upline is wallet 2 |',
      'Wallets 1 to 10 are referrers; wallets 11 to 50 were referred by one of them.',
      'Ten of the active listings, none among the newest, name a token the indexer has no NFT row for (its mint not indexed yet):',
      '`"editionId": "0"`, `"editionName": ""`, `"artUri": ""`, `"nftName": ""` and `0` for `rarity`, `gender` and the `attributes`; `filter=editionId=0` lists them.',
    ]) {
      expect(page).toContain(text);
    }
  });

  it('is what the table says', async () => {
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
    // Listings whose NFT is not indexed: the exception, and not what a list shows first.
    expect(await total('/marketplace/listings?filter=editionId=0')).toBe(10);
    const newest = (await (await stack.get('/marketplace/listings?pageSize=20')).json()) as { items: { editionId: string; nftName: string }[] };
    expect(newest.items.filter((listing) => listing.editionId === '0' || listing.nftName === '')).toEqual([]);
    const cheapest = (await (await stack.get('/marketplace/listings?filter=price<=5000000000000000&pageSize=5')).json()) as {
      items: { editionName: string }[];
    };
    expect(cheapest.items.map((listing) => listing.editionName)).not.toContain('');
    const [missing] = ((await (await stack.get('/marketplace/listings?filter=editionId=0&pageSize=1')).json()) as { items: Record<string, unknown>[] }).items;
    expect(missing).toMatchObject({
      editionId: '0',
      editionName: '',
      artUri: '',
      nftName: '',
      rarity: 0,
      gender: 0,
      attributes: { health: 0, skill: 0, morale: 0 },
    });
    const count = async (table: string, where = 'true') =>
      (await stack.sql<{ n: number }>(`SELECT count(*)::int AS n FROM indexer.${table} WHERE ${where}`))[0]!.n;
    expect(await count('nfts')).toBe(5000);
    expect(await count('nfts', 'burned')).toBe(200);
    expect(await count('listings')).toBe(1000);
    expect(await count('staking_pairs')).toBe(600);
    expect(await count('forge_requests')).toBe(800);
    expect(await count('sales')).toBe(2000);
    expect(await count('editions')).toBe(40);
    expect((await stack.sql<{ n: number }>(`SELECT count(DISTINCT owner)::int AS n FROM indexer.nfts`))[0]!.n).toBe(50);
    for (let n = 1; n <= 10; n++) expect(await (await stack.get(wallet(n, 'referral'))).json(), `wallet ${n}`).toHaveProperty('code');
    for (let n = 11; n <= 50; n++) {
      const referral = (await (await stack.get(wallet(n, 'referral'))).json()) as { upline?: string };
      expect(
        [...Array(10)].map((_, i) => demoAddress(i + 1)),
        `wallet ${n}`,
      ).toContain(referral.upline);
    }
  });

  // Every block of public requests, wherever it is: run with bash, a line at a time, as a reader pastes them.
  for (const block of [docBlock('tour-list'), docBlock('local-try-it'), docBlock('indexed-data'), docBlock('min-block-demo')]) {
    it(`the curl examples at ${where(block)} answer 200 with something in them`, async () => {
      const lines = commandLines(block);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line, where(block)).toMatch(/^curl /);
        const { code, stdout, stderr } = await runShell(onStack(line, stack.url));
        expect(code, `${line}\n${stderr}${stdout}`).toBe(0);
        expect(stdout.trim(), line).not.toBe('');
        if (line.includes('/metrics')) expect(stdout, line).toMatch(/^hatchery_requests_total\{route="GET \/editions",service="hatchery"\} \d+$/m);
        else {
          const body = JSON.parse(stdout) as { items?: unknown[] };
          if (body.items) expect(body.items.length, line).toBeGreaterThan(0);
        }
      }
    });
  }
});

describe("the demo data's Ponder checkpoint", () => {
  it("is the block docs/http-api.md's minBlock example names, on the demo chain", async () => {
    const [{ value: latest }] = (await stack.sql<{ value: string }>(latestBlockSql)) as [{ value: string }];
    const block = docBlock('min-block-demo');
    expect(commandLines(block).join('\n'), where(block)).toContain(`minBlock=${demoChainId}:${latest}'`);
    expect(block.text, where(block)).toContain(`chain ${demoChainId}'s, indexed up to block ${latest} `);
  });

  it(`stands at the demo data's latest block of chain ${demoChainId}, and npm run simulate moves it with each block it writes`, async () => {
    const [{ value: latest }] = (await stack.sql<{ value: string }>(latestBlockSql)) as [{ value: string }];
    const health = (await (await stack.get('/health')).json()) as { indexer: unknown };
    expect(health.indexer).toEqual({
      chains: [expect.objectContaining({ chainId: demoChainId, block: latest, safeBlock: latest, finalizedBlock: latest, ready: true })],
    });
    expect((await stack.get('/marketplace/listings')).headers.get('x-indexed-block')).toBe(`${demoChainId}=${latest}`);
    const simulated = await runShell('npm run -s simulate -- --every 1 --count 3', { HATCHERY_DATA_DIR: stack.dataDir }, 60_000);
    expect(simulated.code, simulated.stderr + simulated.stdout).toBe(0);
    expect(simulated.stdout).toContain(`Ponder's checkpoint (chain ${demoChainId}) follows each block`);
    // Three blocks: a read with the last as minBlock answers once the index is there, and says so.
    const head = String(BigInt(latest) + 3n);
    const response = await stack.get(`/marketplace/listings?minBlock=${head}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-indexed-block')).toBe(`${demoChainId}=${head}`);
  }, 90_000);
});
