import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, indexedBlocks, isProblem } from '../../../packages/client/src/index';
import { demoAddress, demoSizes } from '@hatchery/local/demo-data';
import { openApiDocument } from '@hatchery/functions/openapi';
import { httpRoutes } from '@hatchery/functions/routes';
import { commandLines, docBlock, onStack, runShell, where } from '../../support/docs';
import { slackMs, slowestOf, timed } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';
import { freshnessCacheMs } from '@hatchery/core/indexer/freshness';
import { minBlockLimits } from '@hatchery/core/indexer/min-block';

/**
 * `minBlock` on every read of the indexer's data, through the real
 * local gateway, with Ponder's bookkeeping tables (`_ponder_checkpoint`,
 * `_ponder_meta`) written here as Ponder writes them, so that the test moves
 * the index itself. test/stack/ponder/ runs the same against a real Ponder.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ demoData: demoSizes.demo });
});
afterAll(() => stack?.stop());

const wallet = demoAddress(1);
const reads = [
  '/editions',
  `/accounts/${wallet}/nfts`,
  '/marketplace/listings',
  `/accounts/${wallet}/staking`,
  `/accounts/${wallet}/forge-requests`,
  '/transparency/sales',
  `/accounts/${wallet}/referral`,
  '/transparency/summary',
];
const chainId = 31337;

/** Ponder's checkpoint string (75 digits) for the end of `block` on `chain`. */
const checkpoint = (block: bigint | number, chain = chainId, timestamp = Math.floor(Date.now() / 1000)) =>
  `${String(timestamp).padStart(10, '0')}${String(chain).padStart(16, '0')}${String(block).padStart(16, '0')}${'9'.repeat(16)}9${'9'.repeat(16)}`;

async function createPonderTables(): Promise<void> {
  await stack.sql(`CREATE TABLE indexer._ponder_meta (key text PRIMARY KEY, value jsonb)`);
  await stack.sql(`INSERT INTO indexer._ponder_meta VALUES ('app', '{"is_ready": 1, "is_dev": 0, "version": "6"}')`);
  await stack.sql(`CREATE TABLE indexer._ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint NOT NULL,
    safe_checkpoint varchar(75) NOT NULL, latest_checkpoint varchar(75) NOT NULL, finalized_checkpoint varchar(75) NOT NULL)`);
}

/** Moves the index, as Ponder does at the end of a block; `rows` are written in the same transaction. */
async function indexBlock(
  latest: bigint,
  { safe, finalized, chain = chainId, rows = '' }: { safe?: bigint; finalized?: bigint; chain?: number; rows?: string } = {},
) {
  await stack.sql(`BEGIN; ${rows}
    INSERT INTO indexer._ponder_checkpoint VALUES ('chain${chain}', ${chain}, '${checkpoint(safe ?? latest, chain)}', '${checkpoint(latest, chain)}', '${checkpoint(finalized ?? latest, chain)}')
    ON CONFLICT (chain_name) DO UPDATE SET latest_checkpoint = excluded.latest_checkpoint, safe_checkpoint = excluded.safe_checkpoint, finalized_checkpoint = excluded.finalized_checkpoint;
    COMMIT`);
}

const sale = (id: string, block: bigint) =>
  `INSERT INTO indexer.sales (id, token_id, seller, buyer, price, platform_fee, royalty, block_number) VALUES ('${id}', 1, '${wallet}', '${demoAddress(2)}', 7, 0, 0, ${block});`;

const get = (path: string, minBlock?: string) =>
  stack.get(minBlock === undefined ? path : `${path}${path.includes('?') ? '&' : '?'}minBlock=${encodeURIComponent(minBlock)}`);

/** Waits out the instance's cached view of the index (freshnessCacheMs). */
const afterFreshnessCache = () => new Promise((resolve) => setTimeout(resolve, freshnessCacheMs + 50));

/** The slowest of a few plain reads of `path`, as this machine answers them now (support/pace.ts). */
const roundTrip = (path: string) => slowestOf(async () => (await get(path)).arrayBuffer());

/**
 * Under this, an answer came at once rather than after a wait for the block: a wait polls until minBlockLimits.waitMs,
 * so its answer comes after waitMs − pollMs at the soonest. On a machine so slow that ten plain reads take longer, the
 * bound is those ten reads instead.
 */
const atOnceMs = (roundTripMs: number) => Math.max(minBlockLimits.waitMs - minBlockLimits.pollMs, 10 * roundTripMs);

async function expectProblem(response: Response, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('etag')).toBeNull();
  return (await response.json()) as Record<string, unknown> & { errors?: Record<string, string[]> };
}

describe('minBlock', () => {
  it('says plainly that it cannot be checked while the indexer keeps no Ponder checkpoint', async () => {
    // The demo data keeps one (chain 31337 at its latest block); an indexer that keeps none has neither table.
    expect((await get('/transparency/sales')).headers.get('x-indexed-block')).toMatch(/^31337=\d+$/);
    await stack.sql('DROP TABLE indexer._ponder_checkpoint; DROP TABLE indexer._ponder_meta');
    await afterFreshnessCache();
    const roundTripMs = await roundTrip('/transparency/sales');
    const started = performance.now();
    const body = await expectProblem(await get('/transparency/sales', '1'), 409);
    expect(performance.now() - started).toBeLessThan(atOnceMs(roundTripMs));
    expect(body).toMatchObject({ status: 409, title: 'Not indexed yet', indexedBlock: 'unknown' });
    expect(body.detail).toMatch(/no Ponder checkpoint/);
    // Without minBlock the reads answer as ever, with no freshness headers.
    const plain = await get('/transparency/sales');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('x-indexed-block')).toBeNull();
  });

  it('answers every read as without it once the index has reached the block, with the index’s latest, safe and finalized blocks', async () => {
    await createPonderTables();
    await indexBlock(100n, { safe: 60n, finalized: 70n });
    await afterFreshnessCache();
    for (const path of reads) {
      const plain = await get(path);
      for (const minBlock of ['100', '99', '0', `${chainId}:100`, '0000100']) {
        const response = await get(path, minBlock);
        expect(response.status, `${path} ${minBlock}`).toBe(200);
        expect(response.headers.get('x-indexed-block'), path).toBe(`${chainId}=100`);
        expect(response.headers.get('x-safe-block'), path).toBe(`${chainId}=60`);
        expect(response.headers.get('x-finalized-block'), path).toBe(`${chainId}=70`);
        expect(response.headers.get('cache-control'), path).toMatch(/s-maxage=/);
        expect(await response.text(), `${path} ${minBlock}`).toBe(await plain.clone().text());
      }
    }
    const health = (await (await get('/health')).json()) as { indexer: { chains: unknown[] } };
    expect(health.indexer.chains).toEqual([expect.objectContaining({ chainId, block: '100', safeBlock: '60', finalizedBlock: '70', ready: true })]);
  });

  it('waits for a block one ahead, then answers with the rows indexed in it', async () => {
    const before = (await (await get('/transparency/sales?pageSize=1')).json()) as { totalCount: number };
    const started = Date.now();
    const waiting = get('/transparency/sales?pageSize=1', '101');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await indexBlock(101n, { safe: 60n, finalized: 71n, rows: sale('min-block-101', 101n) });
    const response = await waiting;
    const elapsed = Date.now() - started;
    // A 200, not the 409 that ends a wait: answered within minBlockLimits.waitMs of waiting, once the block came.
    expect(response.status).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(500);
    expect(response.headers.get('x-indexed-block')).toBe(`${chainId}=101`);
    const page = (await response.json()) as { totalCount: number; items: { blockNumber: string }[] };
    // The count cache is keyed by minBlock: the count from before the block is not reused.
    expect(page.totalCount).toBe(before.totalCount + 1);
  });

  it('never answers the summary from totals older than the block, whatever its cache holds', async () => {
    const salesCount = () => get('/transparency/summary').then(async (response) => ((await response.json()) as { salesCount: number }).salesCount);
    const cached = await salesCount();
    await indexBlock(102n, { rows: sale('min-block-102', 102n) });
    const [{ n: indexed }] = (await stack.sql<{ n: number }>('SELECT count(*)::int AS n FROM indexer.sales')) as [{ n: number }];
    expect(await salesCount(), 'the totals the instance keeps for 30 s').toBe(cached);
    expect(cached).toBeLessThan(indexed);
    const fresh = await get('/transparency/summary', '102');
    expect(fresh.status).toBe(200);
    expect(((await fresh.json()) as { salesCount: number }).salesCount).toBe(indexed);
    // Kept, as of block 102, for the requests that follow, with minBlock or not.
    expect(await salesCount()).toBe(indexed);
  });

  // The next three change nothing and each waits out minBlockLimits.waitMs for a 409: they run at once, not one after another.
  it.concurrent('answers a block not reached within the bound with a 409 naming minBlock and the indexed block, with Retry-After, never cached', async ({
    expect,
  }) => {
    const roundTripMs = await roundTrip('/marketplace/listings');
    const { value: answer, ms: elapsed, lagMs } = await timed(() => get('/marketplace/listings', '110'));
    const body = await expectProblem(answer, 409);
    expect(elapsed).toBeGreaterThanOrEqual(minBlockLimits.waitMs - minBlockLimits.pollMs);
    // The wait's own bound, give or take a poll's lag and the round trips of this machine now.
    expect(elapsed).toBeLessThan(minBlockLimits.waitMs + slackMs({ lagMs, roundTripMs }));
    expect(body).toMatchObject({
      status: 409,
      title: 'Not indexed yet',
      minBlock: `${chainId}:110`,
      indexedBlock: `${chainId}:102`,
      instance: '/marketplace/listings',
    });
    expect(body.detail).toMatch(/minBlock 110 .* block 102/);
  });

  it.concurrent('sends the Retry-After of the 409', async ({ expect }) => {
    const response = await get(`/accounts/${wallet}/referral`, '103');
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe(String(minBlockLimits.retryAfterSeconds));
  });

  it.concurrent('refuses a malformed minBlock, or one far beyond any plausible head, at once with a 422 naming it', async ({ expect }) => {
    // "Far" is measured from the head as each instance last read it: every read's view must include block 102.
    await afterFreshnessCache();
    const far = String(102 + minBlockLimits.maxAheadBlocks + 1);
    const roundTripMs = Math.max(...(await Promise.all([reads[0]!, reads[6]!, reads[7]!].map(roundTrip))));
    for (const minBlock of [
      'abc',
      '-1',
      '1.5',
      '1e3',
      '0x10',
      '1:2:3',
      ':5',
      '5:',
      ' 5',
      '9'.repeat(17),
      `1:${'9'.repeat(17)}`,
      far,
      `${chainId}:${far}`,
      '1:5',
      '8453:5',
    ]) {
      for (const path of [reads[0]!, reads[6]!, reads[7]!]) {
        const started = performance.now();
        const body = await expectProblem(await get(path, minBlock), 422);
        expect(performance.now() - started, `${path} ${minBlock}`).toBeLessThan(atOnceMs(roundTripMs));
        expect(Object.keys(body.errors!), `${path} ${minBlock}`).toEqual(['minBlock']);
      }
    }
    // A block just inside the bound is not refused: it waits (and is not reached).
    expect((await get('/editions', String(102 + minBlockLimits.maxAheadBlocks))).status).toBe(409);
  });

  it('names the chain once several are indexed: bare blocks are refused, <chainId>:<block> is read per chain', async () => {
    await indexBlock(5_000n, { chain: 8453, safe: 4_900n, finalized: 4_950n });
    await afterFreshnessCache();
    const body = await expectProblem(await get('/editions', '5'), 422);
    expect(body.errors!.minBlock![0]).toMatch(/several chains are indexed \(8453, 31337\)/);
    const response = await get('/editions', '8453:5000');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-indexed-block')).toBe(`8453=5000, ${chainId}=102`);
    expect(response.headers.get('x-finalized-block')).toBe(`8453=4950, ${chainId}=102`);
    expect((await get('/editions', `${chainId}:102`)).status).toBe(200);
    await stack.sql(`DELETE FROM indexer._ponder_checkpoint WHERE chain_id = 8453`);
    await afterFreshnessCache();
  });

  it(`runs docs/http-api.md's example (${where(docBlock('min-block-demo'))}): 200 once its chain reached the block, 409 while not`, async () => {
    const [line] = commandLines(docBlock('min-block-demo'));
    const [, minBlock, chain, block] = /minBlock=((\d+):(\d+))/.exec(line!)!;
    const run = async () => {
      const { code, stdout } = await runShell(onStack(line!.replace(/^curl /, 'command curl -w "\\n%{http_code}" '), stack.url));
      expect(code).toBe(0);
      return {
        status: Number(stdout.slice(stdout.lastIndexOf('\n') + 1)),
        body: JSON.parse(stdout.slice(0, stdout.lastIndexOf('\n'))) as Record<string, unknown>,
      };
    };
    expect(Number(chain)).toBe(chainId);
    await indexBlock(BigInt(block!) - 1n);
    await afterFreshnessCache();
    expect(await run()).toMatchObject({ status: 409, body: { minBlock, indexedBlock: `${chain}:${BigInt(block!) - 1n}` } });
    await indexBlock(BigInt(block!));
    await afterFreshnessCache();
    const { status, body } = await run();
    expect(status).toBe(200);
    expect((body.items as unknown[]).length).toBe(5);
    await indexBlock(102n);
    await afterFreshnessCache();
  });

  it('is a parameter of every indexed read in the OpenAPI document, with its 409, and the freshness headers', () => {
    const document = openApiDocument();
    const indexed = Object.values(httpRoutes).filter((route) => 'indexed' in route && route.indexed);
    expect(indexed.map((route) => route.path).sort()).toEqual(reads.map((path) => path.replace(wallet, '{address}')).sort());
    for (const route of indexed) {
      const operation = (document.paths[route.path] as Record<string, any>).get;
      const parameter = operation.parameters.find((each: { name: string }) => each.name === 'minBlock');
      expect(parameter, route.path).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
      expect(parameter.description).toMatch(/409/);
      expect(operation.responses[409].description, route.path).toMatch(/minBlock/);
      expect(operation.responses[409].content['application/problem+json'].example).toMatchObject({
        status: 409,
        minBlock: expect.any(String),
        indexedBlock: expect.any(String),
      });
      expect(Object.keys(operation.responses[200].headers)).toEqual(['X-Indexed-Block', 'X-Safe-Block', 'X-Finalized-Block']);
    }
  });
});

/** One request with the target sent byte for byte, so that broken percent-escapes reach the server. */
function send(target: string): Promise<{ status: number; contentType?: string; body: string }> {
  const origin = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: origin.hostname, port: origin.port, path: target }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

describe('minBlock, fuzzed', () => {
  const head = 102n;
  const digits = (min: bigint, max: bigint) => fc.bigInt({ min, max }).map(String);
  /**
   * What must answer at once: reached, or refused. The blocks within the bound wait minBlockLimits.waitMs each; the
   * property asks them not one after another but all at once, beside it (`withinBound`).
   */
  const minBlockValue = fc.oneof(
    { weight: 4, arbitrary: digits(0n, head) },
    { weight: 4, arbitrary: digits(head + BigInt(minBlockLimits.maxAheadBlocks) + 1n, 10n ** 20n) },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.constantFrom('31337', '1', '8453', '0', '', '9'.repeat(17)), digits(0n, 10n ** 17n)).map(([chain, block]) => `${chain}:${block}`),
    },
    { weight: 4, arbitrary: fc.string({ maxLength: 20 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '-0',
        '+1',
        '1_000',
        '１２',
        '٣',
        'Infinity',
        'NaN',
        'constructor',
        '__proto__',
        '0x1',
        '1n',
        '%',
        '%00',
        '%FF',
        '%C3%28',
        '1%2C2',
        '1&minBlock=2',
      ),
    },
  );

  /** `target`'s answer is a success, a 409 or a 422 problem that shows nothing of the server's insides; its status. */
  async function expectAnswered(target: string): Promise<number> {
    const response = await send(target);
    const description = `${target} → ${response.status} ${response.body.slice(0, 300)}`;
    expect([200, 409, 422], description).toContain(response.status);
    if (response.status !== 200) {
      expect(response.contentType, description).toBe('application/problem+json');
      expect(response.body, description).not.toMatch(/SELECT|indexer\.|\bat [^ ]+\.(ts|js):\d+/);
    }
    return response.status;
  }

  it('answers every minBlock value on every indexed read with 200, 409 or a 422 problem, never a 500 (property)', async () => {
    // Every block within the bound a little ahead of the head, bare or naming the chain (raw and percent-encoded), on
    // every read: each waits, then a 409.
    const withinBound = reads.flatMap((path) =>
      [head + 1n, head + 2n, head + 3n].flatMap((block) =>
        [`${block}`, `${chainId}:${block}`, `${chainId}%3A${block}`].map(async (value) => {
          const target = `${path}?minBlock=${value}`;
          expect(await expectAnswered(target), target).toBe(409);
        }),
      ),
    );
    const answered = Promise.all(withinBound);
    answered.catch(() => undefined);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...reads), minBlockValue, fc.boolean(), async (path, minBlock, raw) => {
        // Raw: as written, broken escapes included; else percent-encoded text.
        const value = raw && /^[\x21-\x7e]*$/.test(minBlock) ? minBlock.replace(/[#?]/g, '') : encodeURIComponent(minBlock);
        await expectAnswered(`${path}?minBlock=${value}`);
      }),
      { numRuns: 200 },
    );
    await answered;
  }, 300_000);
});

describe('the typed client', () => {
  it('sends minBlock on the reads that follow readAfter, and the read waits for the block', async () => {
    const client = createClient({ baseUrl: stack.url });
    client.readAfter(103);
    client.readAfter(50);
    const waiting = client.api.listSales({ filter: 'blockNumber=103' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await indexBlock(103n, { rows: sale('min-block-103', 103n) });
    const page = await waiting;
    expect(indexedBlocks(page)).toEqual({ [chainId]: 103n });
    expect(page.items[0]).toMatchObject({ blockNumber: '103' });
    // Not the reads that take no minBlock.
    expect((await client.api.health()).status).toBe('ok');
  });

  it('retries the 409 after its Retry-After, so a read answers once the index gets there', async () => {
    const client = createClient({ baseUrl: stack.url });
    const started = Date.now();
    const reading = client.api.getSummary(undefined, { minBlock: { chainId, block: 104 } });
    // A client that does not retry hands the 409 to its caller: asked meanwhile, and answered before the index moves on.
    const behind = createClient({ baseUrl: stack.url, retry: { retries: 0 } })
      .api.listEditions(undefined, { minBlock: 106 })
      .catch((error: unknown) => error);
    await Promise.all([new Promise((resolve) => setTimeout(resolve, minBlockLimits.waitMs + 300)), behind]);
    await indexBlock(104n);
    await expect(reading).resolves.toMatchObject({ salesCount: expect.any(Number) });
    expect(Date.now() - started).toBeGreaterThan(minBlockLimits.waitMs);
    const refused = await client.api.listEditions({ minBlock: 'abc' }).catch((error: unknown) => error);
    expect(isProblem(refused, 422) && refused.errors).toHaveProperty('minBlock');
    expect(await behind).toMatchObject({
      status: 409,
      minBlock: `${chainId}:106`,
      indexedBlock: `${chainId}:103`,
      retryAfterMs: minBlockLimits.retryAfterSeconds * 1000,
    });
  });

  it(`runs docs/client.md's example (${where(docBlock('client-read-after'))}): its reads carry minBlock and answer once the block is indexed`, async () => {
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(String(input));
      return fetch(input, init);
    };
    const hatchery = createClient({ baseUrl: stack.url, fetch: recording });
    // The chain is indexed up to the block before the player's.
    await indexBlock(23_456_789n, { chain: 8453 });
    await afterFreshnessCache();
    const receipt = { blockNumber: 23_456_790n };
    const logged: string[] = [];
    const example = new Function('hatchery', 'receipt', 'wallet', 'console', `return (async () => { ${docBlock('client-read-after').text} })()`);
    const running = example(hatchery, receipt, wallet, { log: (line: string) => logged.push(line) }) as Promise<void>;
    await new Promise((resolve) => setTimeout(resolve, 300));
    await indexBlock(23_456_790n, { chain: 8453 });
    await running;
    expect(sent.map((url) => new URL(url).searchParams.get('minBlock'))).toEqual(['8453:23456790', '8453:23456790']);
    expect(logged).toEqual([expect.stringMatching(/^10 listings, \d+ NFTs, as of block 23456790 or later$/)]);
    await stack.sql(`DELETE FROM indexer._ponder_checkpoint WHERE chain_id = 8453`);
  });
});
