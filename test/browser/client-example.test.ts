import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { decodeCheckpoint } from '@hatchery/core/indexer/freshness';
import { demoAddress, demoChainId, demoSizes } from '@hatchery/local/demo-data';
import { indexerActivity } from '@hatchery/local/simulate';
import { freePort } from '@hatchery/local/ports';
import { indexer, waitFor } from '../stack/realtime/support';
import { startTestStack, type TestStack } from '../support/stack';
import { commandLines, docBlock, repository, runShell, where } from '../support/docs';
import { hasChromium, launchChromium, needsChromium, type Browser } from './chromium';

/**
 * docs/client.md's front-end example, runnable on the local stack (examples/client: app.js as the page writes it, behind
 * local.js's test wallet and token), served and opened in Chromium by the page's own commands.
 */
describe.skipIf(!hasChromium)(`docs/client.md's example in headless Chromium${needsChromium}`, () => {
  const tryIt = docBlock('client-try-it');
  const [build, serveApi, serveApp, openUrl, simulate] = commandLines(tryIt);
  const documentedOrigin = 'http://127.0.0.1:8080';
  let origin: string;
  let stack: TestStack;
  let browser: Browser;
  const terminals: ChildProcess[] = [];
  let simulating: ChildProcess | undefined;
  let copy: string | undefined;

  /** A command as typed in a terminal of its own at the repository root; stdin stays open, as a terminal's does (esbuild's server stops when it closes). */
  const terminal = (line: string, env: Record<string, string> = {}) => {
    const child = spawn('bash', ['-c', line], { cwd: repository, env: { ...process.env, ...env }, stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    terminals.push(child);
    return child;
  };
  /** The page's origin in the commands is 127.0.0.1:8080; here it is a free port. */
  const ownPort = (line: string) => line.replaceAll(documentedOrigin, origin).replaceAll('127.0.0.1:8080', new URL(origin).host);

  beforeAll(async () => {
    origin = `http://127.0.0.1:${await freePort()}`;
    // The stack with the page's origin allowed, as the second command starts it (the test's stack, on its own port).
    expect(serveApi).toMatch(new RegExp(`^CORS_ORIGINS=${documentedOrigin.replaceAll('.', '\\.')} npm start\\s`));
    // With the demo data, as npm start serves it.
    stack = await startTestStack({ demoData: demoSizes.demo, env: { CORS_ORIGINS: origin } });
    browser = await launchChromium();
    expect(build).toMatch(/^npm run build -w @hatchery\/client\s/);
    const built = await runShell(build!, {}, 120_000);
    expect(built.code, built.stderr + built.stdout).toBe(0);
    expect(serveApp).toMatch(/^npx esbuild examples\/client\/local\.js .*--serve=127\.0\.0\.1:8080$/);
    // The example names the stack at port 3000; this one is on its own port, so a copy of the folder (inside the repository, where
    // @hatchery/client resolves) names it instead, and the command serves the copy.
    copy = await mkdtemp(join(repository, 'test', '.readme-example-'));
    for (const file of ['index.html', 'local.js']) await copyFile(join(repository, 'examples', 'client', file), join(copy, file));
    await writeFile(join(copy, 'app.js'), docBlock('client-app').text.replace("'http://127.0.0.1:3000'", JSON.stringify(stack.url)));
    terminal(ownPort(serveApp!).replaceAll('examples/client', relative(repository, copy)));
    for (
      let waited = 0;
      (await fetch(`${origin}/www/local.js`).then(
        (response) => response.status,
        () => 0,
      )) !== 200;
      waited += 100
    ) {
      if (waited > 30_000) throw new Error(`esbuild did not serve ${origin}/www/local.js`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 180_000);

  afterAll(async () => {
    // Ctrl-C in each terminal (its whole process group), then SIGKILL for any that did not stop.
    for (const child of terminals) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      process.kill(-child.pid!, 'SIGINT');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
      await once(child, 'exit');
      clearTimeout(timer);
    }
    await browser?.close();
    await stack?.stop();
    if (copy) await rm(copy, { recursive: true, force: true });
  }, 60_000);

  it(`${where(docBlock('client-app'))} is examples/client/app.js, line for line`, () => {
    expect(readFileSync(join(repository, 'examples', 'client', 'app.js'), 'utf8')).toBe(docBlock('client-app').text);
  });

  it('without a token, the page says in one line how to get one', async () => {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    await expect.poll(() => page.locator('#log').textContent(), { timeout: 10_000 }).toMatch(/^Open this page with \?token=… : `npm run -s token/);
    await page.close();
  });

  it(`${where(tryIt)}: links the page's test wallet, lists, walks the sales, reloads after marketChanged and sees its forge request fulfilled`, {
    timeout: 150_000,
  }, async () => {
    // The URL the page's command prints: a token of a new player from the stack's identity provider.
    expect(openUrl).toMatch(
      /^P=player-\$RANDOM; echo "http:\/\/127\.0\.0\.1:8080\/\?token=\$\(npm run -s token -- --uid \$P --email \$P@example\.com \| tail -1\)"/,
    );
    const printed = await runShell(ownPort(openUrl!), { HATCHERY_DATA_DIR: stack.dataDir });
    expect(printed.code, printed.stderr).toBe(0);
    const url = printed.stdout.trim();
    expect(url).toMatch(new RegExp(`^${origin.replaceAll('.', '\\.')}/\\?token=ey`));

    // The wallet of a test key of the test's own (&key=), so that an open forge request of it exists before the page reads them.
    const key = generatePrivateKey();
    const wallet = privateKeyToAccount(key).address.toLowerCase();
    const writer = indexer(stack);
    const request = { requestId: '778000001', buyer: wallet, tier: 1, block: '1' };
    await createIndexerSchema(writer.pool);
    await writer.requestForge(request);
    // A sales history of three pages at 100 a page, for the example's walk.
    await writer.pool.query(`INSERT INTO indexer.sales SELECT 'example-' || i, i, $1, $1, 1000 + i, 1, 1, i FROM generate_series(1, 250) AS i`, [wallet]);
    expect(simulate).toMatch(/^npm run simulate -- --wallet <the wallet the page prints>\s/);

    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(String(error)));
    // The chain fulfils the request once the app has read the open ones, in the simulator's latest block (the listener's cursor only moves on).
    page.on('requestfinished', (finished) => {
      // Its read of the open ones, not the events' read of the fulfilled ones when it subscribes.
      if (!finished.url().includes('/forge-requests') || !finished.url().includes('status%3DRequested')) return;
      void stack
        .sql<{ block: string }>(
          `SELECT greatest((SELECT max(updated_at_block) FROM indexer.listings), (SELECT max(block_number) FROM indexer.forge_requests),
             (SELECT max(fulfilled_at_block) FROM indexer.forge_requests), (SELECT max(block_number) FROM indexer.sales), 1)::text AS block`,
        )
        .then(([row]) => writer.fulfil({ ...request, tokenId: '778', editionId: '7', block: row!.block }));
    });
    await page.goto(`${url}&key=${key}`);
    const lines = async () => ((await page.locator('#log').textContent()) ?? '').split('\n');
    await expect
      .poll(async () => (await lines()).find((line) => line.startsWith('forged')) ?? failures[0], { timeout: 100_000 })
      .toMatch(/^forged \{"requestId":"778000001","tokenId":"778","editionId":"7","source":"(event|api)"\}$/);
    await writer.end();
    // The simulator starts once the page has its forge request: it forges for the same wallet, and a request of its own
    // opened before the page's read of the open ones would be the one the page waits for.
    simulating = terminal(simulate!.replace('<the wallet the page prints>', wallet), { HATCHERY_DATA_DIR: stack.dataDir });
    await expect.poll(async () => (await lines()).some((line) => line.startsWith('reload listings')), { timeout: 30_000 }).toBe(true);
    const shown = await lines();
    expect(shown[0]).toBe(`wallet ${wallet} (a local test key): the example links it to the token's account`);
    expect(shown.find((line) => / listings, first /.test(line))).toMatch(/^[1-9]\d* listings, first \d+$/);
    const walked = Number(/^(\d+) sales in the history, \d+ wei in all$/.exec(shown.find((line) => line.includes(' sales in the history')) ?? '')?.[1]);
    expect(walked).toBeGreaterThanOrEqual(250);
    // The reload after the event carries its count, counted after it.
    const reload = shown.find((line) => line.startsWith('reload listings'))!;
    expect(reload).toMatch(/^reload listings \{"count":\d+,"maxBlock":"\d+","version":\d+\} \d+$/);
    expect(failures).toEqual([]);
    await browser.screenshot(page, 'client-example');
    const [account] = await stack.sql<{ wallet_address: string }>(`SELECT wallet_address FROM hatchery.accounts WHERE id LIKE 'player-%'`);
    expect(account?.wallet_address).toBe(wallet);
    expect(terminals.map((child) => child.exitCode)).toEqual([null, null]);
  });

  it(`${where(docBlock('client-listing-after-tx'))}: the listing is in the first answer of the read after its transaction, which waits for its block`, {
    timeout: 60_000,
  }, async () => {
    // Ctrl-C in simulate's terminal: the index moves only with the listing's block here.
    if (simulating && simulating.exitCode === null && simulating.signalCode === null) {
      process.kill(-simulating.pid!, 'SIGINT');
      await once(simulating, 'exit');
    }
    const checkpointBlock = async () => {
      const [row] = await stack.sql<{ latest: string }>(`SELECT latest_checkpoint AS latest FROM indexer._ponder_checkpoint WHERE chain_id = ${demoChainId}`);
      return BigInt(decodeCheckpoint(row!.latest)!.block);
    };
    // The demo data's checkpoint, moved by simulate block by block as Ponder moves it.
    const before = await checkpointBlock();
    const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    // The indexer writes blocks as simulate does: the listing and the checkpoint at its block in one transaction.
    const chain = indexerActivity(pool, { checkpoint: true });
    const tokenId = '990000001';
    const price = '1500000000000000000';
    let mined: bigint | undefined;
    let indexed: Promise<void> | undefined;

    // The page: the client's bundle, and the wallet's listing transaction as a stand-in (window.mine), answered by the test.
    await mkdir(join(copy!, 'client'), { recursive: true });
    const dist = join(repository, 'packages', 'client', 'dist');
    for (const file of (await readdir(dist)).filter((name) => name.endsWith('.js'))) await copyFile(join(dist, file), join(copy!, 'client', file));
    await writeFile(
      join(copy!, 'read-after.html'),
      `<!doctype html>\n<meta charset="utf-8">\n<script type="module">import { createClient } from './client/index.js'; window.createClient = createClient;</script>\n`,
    );
    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(String(error)));
    const reads: { url: string }[] = [];
    page.on('request', (request) => {
      if (request.method() === 'GET' && request.url().includes('/marketplace/listings')) reads.push({ url: request.url() });
    });
    // Mined in the next block, N; the indexer indexes N once the page's read with minBlock=N has gone out, however long
    // the page takes to send it: the read is sent before the index reaches N.
    await page.exposeFunction('mine', (id: string, amount: string) => {
      mined = before + 1n;
      const block = String(mined);
      indexed = waitFor(() => reads.some((read) => new URL(read.url).searchParams.get('minBlock') === block), 'the read with minBlock', 30_000).then(
        async () => {
          await chain.list({ tokenId: id, seller: demoAddress(3), price: amount, block });
        },
      );
      return block;
    });
    await page.goto(`${origin}/read-after.html`);
    await page.waitForFunction(() => 'createClient' in globalThis);
    const logged = await page.evaluate(
      async ({ baseUrl, snippet, tokenId, price }) => {
        const lines: string[] = [];
        const page = globalThis as unknown as { createClient(options: { baseUrl: string }): unknown; mine(id: string, amount: string): Promise<string> };
        const hatchery = page.createClient({ baseUrl });
        const listToken = async (id: string, amount: string) => ({ blockNumber: BigInt(await page.mine(id, amount)) });
        const example = new Function('hatchery', 'listToken', 'tokenId', 'price', 'console', `return (async () => { ${snippet} })()`);
        await example(hatchery, listToken, tokenId, price, { log: (line: string) => lines.push(line) });
        return lines;
      },
      { baseUrl: stack.url, snippet: docBlock('client-listing-after-tx').text, tokenId, price },
    );
    await indexed!;
    await pool.end();
    expect(failures).toEqual([]);
    expect(logged).toEqual([`listed token ${tokenId} for ${price} wei, as of block ${mined} or later`]);
    // One read, sent with minBlock=N before the index had reached N: the server waited, no 409 and no retry.
    expect(reads).toHaveLength(1);
    expect(new URL(reads[0]!.url).searchParams.get('minBlock')).toBe(String(mined));
    expect(await checkpointBlock()).toBe(mined);
    await page.close();
  });
});
