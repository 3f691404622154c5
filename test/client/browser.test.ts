import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { hexToBytes, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { indexer } from '../realtime/support';
import { startTestStack, type TestStack } from '../support/stack';
import { commandLines, docBlock, parseDoc, runShell } from '../support/docs';
import { serveAppPage, type AppPage } from './app-page';
import { hasChromium, launchChromium, needsChromium, type Browser } from '../browser/chromium';

const root = join(import.meta.dirname, '..', '..');

describe.skipIf(!hasChromium)(`@hatchery/client in headless Chromium${needsChromium}`, () => {
  let stack: TestStack;
  let app: AppPage;
  let browser: Browser;
  let simulator: ChildProcess | undefined;

  beforeAll(async () => {
    app = await serveAppPage();
    // The page is another origin, allowed as a game's front end would be.
    stack = await startTestStack({ env: { CORS_ORIGINS: app.origin } });
    browser = await launchChromium();
  });
  afterAll(async () => {
    simulator?.kill('SIGTERM');
    await browser?.close();
    await stack?.stop();
    await app?.close();
  });

  /** `npm run simulate` against the test stack (found through its data dir): listings, sales, forge requests and fulfilments for `wallet`, one step every 250 ms. */
  function startSimulator(wallet: string): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', 'packages/local/src/simulate.ts', '--every', '250', '--wallet', wallet], {
      cwd: root,
      env: { ...process.env, HATCHERY_DATA_DIR: stack.dataDir },
      stdio: 'ignore',
    });
    return child;
  }

  /** A browser wallet: window.ethereum in the page, its keys (a viem account) outside it. */
  async function withWallet(page: Page, account = privateKeyToAccount(generatePrivateKey())) {
    await page.exposeFunction('walletRequest', async ({ method, params }: { method: string; params?: unknown[] }) => {
      if (method === 'eth_requestAccounts') return [account.address];
      if (method === 'personal_sign') return account.signMessage({ message: { raw: hexToBytes((params as [Hex])[0]) } });
      throw new Error(`${method} is not supported`);
    });
    await page.addInitScript(() => {
      const page = globalThis as unknown as { walletRequest(args: unknown): Promise<unknown>; ethereum: unknown };
      page.ethereum = { request: (args: unknown) => page.walletRequest(args) };
    });
    return account;
  }

  it('links a wallet, subscribes, gets debounced marketChanged and forgeFulfilled, and survives a hub restart', { timeout: 120_000 }, async () => {
    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(String(error)));
    const account = await withWallet(page);
    await page.goto(`${app.origin}/`);
    const token = await stack.idp.signToken({ uid: `browser-${process.pid}`, email: `browser-${process.pid}@example.com`, name: 'Browser' });
    type Seen = { market: { count: number; maxBlock: string }[]; forge: unknown[]; restored: number; log: string[] };
    const seen = () => page.evaluate(() => (globalThis as unknown as { seen: Seen }).seen);
    const forgeNext = (wallet: string) =>
      page.evaluate(
        (args) => (globalThis as unknown as { forgeNext(args: unknown): Promise<{ source: string; requestId: string }> }).forgeNext(args),
        { api: stack.url, wallet },
      );

    const wallet = await page.evaluate((args) => (globalThis as unknown as { run(args: unknown): Promise<string> }).run(args), { api: stack.url, token });
    expect(wallet).toBe(account.address.toLowerCase());
    const [row] = await stack.sql<{ wallet_address: string }>(`SELECT wallet_address FROM hatchery.accounts WHERE id = $1`, [`browser-${process.pid}`]);
    expect(row?.wallet_address).toBe(wallet);

    simulator = startSimulator(wallet);
    await expect(forgeNext(wallet)).resolves.toMatchObject({ source: 'event' });
    await page.waitForFunction(() => (globalThis as unknown as { seen: Seen }).seen.market.length > 0);

    // The WebSocket side goes away as a restarting server does: every connection closed, so the hub forgets their groups.
    for (const connection of stack.hub.connections.values()) connection.socket.close(1012, 'Service Restart');
    await page.waitForFunction(() => (globalThis as unknown as { seen: Seen }).seen.restored === 1);
    const before = (await seen()).forge.length;
    // Only the restored subscription can bring these: nothing else subscribes the new connection.
    await page.waitForFunction((count) => (globalThis as unknown as { seen: Seen }).seen.forge.length > count, before);
    await expect(forgeNext(wallet)).resolves.toMatchObject({ source: 'event' });

    simulator.kill('SIGTERM');
    await once(simulator, 'exit');
    simulator = undefined;
    const writer = indexer(stack);
    const snapshot = await writer.snapshot().finally(() => writer.end());
    // The debounced listener ends on the market as it now is.
    await page.waitForFunction(
      (expected) => {
        const last = (globalThis as unknown as { seen: Seen }).seen.market.at(-1);
        return JSON.stringify(last && { count: last.count, maxBlock: last.maxBlock }) === JSON.stringify(expected);
      },
      snapshot,
    );
    const { log } = await seen();
    expect(log.indexOf('reconnected; subscriptions restored')).toBeGreaterThan(0);
    expect(log.slice(log.indexOf('reconnected; subscriptions restored')).some((line) => line.startsWith('forgeFulfilled'))).toBe(true);
    await browser.screenshot(page, 'client-browser');
    expect(failures).toEqual([]);
  });

  it("runs docs/client.md's front-end example as written, tried as the page says", { timeout: 150_000 }, async () => {
    const example = docBlock('client-app').text;
    expect(example).toContain("from '@hatchery/client'");
    const tryIt = docBlock('client-try-it');
    const [build, serveApi, serveApp, simulate] = commandLines(tryIt);
    const scriptTag = '<script type="module" src="www/app.js"></script>';
    expect(parseDoc(tryIt.file).text.replace(/\s+/g, ' ')).toContain(`an \`index.html\` with \`${scriptTag}\``);
    // The page's origin in the commands is 127.0.0.1:8080; here it is the port the stack already allows.
    const pageOrigin = 'http://127.0.0.1:8080';
    const origin = app.origin;
    const ownPort = (line: string) => line.replaceAll('127.0.0.1:8080', new URL(origin).host);

    // 1. The package built, by the command as written.
    expect(build).toMatch(/^npm run build -w @hatchery\/client\s/);
    const built = await runShell(build!, {}, 120_000);
    expect(built.code, built.stderr + built.stdout).toBe(0);
    // 2. The stack, with the page's origin allowed: this file's stack runs with that setting (started before this test).
    expect(serveApi).toMatch(new RegExp(`^CORS_ORIGINS=${pageOrigin.replaceAll('.', '\\.')} npm start\\s`));
    expect(process.env.CORS_ORIGINS).toBe(origin);
    // 3. The app, from a folder inside the repository holding app.js and index.html, bundled and served by esbuild as written.
    const folder = await mkdtemp(join(root, 'test', '.readme-example-'));
    const commands: ChildProcess[] = [];
    const terminal = (line: string, cwd: string, env: Record<string, string> = {}) => {
      // stdin stays open, as a terminal's does: esbuild's server stops when its stdin closes.
      const child = spawn('bash', ['-c', line], { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'ignore', 'ignore'], detached: true });
      commands.push(child);
      return child;
    };
    try {
      await writeFile(join(folder, 'app.js'), example.replace("'http://127.0.0.1:3000'", JSON.stringify(stack.url)));
      await writeFile(join(folder, 'index.html'), `<!doctype html><title>Hatchery example</title>${scriptTag}`);
      // The origin the stack allows (the other page's server is closed for this).
      await app.close();
      expect(serveApp).toMatch(/^npx esbuild app\.js .*--serve=127\.0\.0\.1:8080$/);
      terminal(ownPort(serveApp!), folder);
      await expect.poll(() => fetch(`${origin}/www/app.js`).then((response) => response.status, () => 0), { timeout: 30_000 }).toBe(200);

      const account = privateKeyToAccount(generatePrivateKey());
      const wallet = account.address.toLowerCase();
      // An open forge request of the player's before the page reads them (the simulator's own come and go every few seconds).
      const writer = indexer(stack);
      const request = { requestId: '777000001', buyer: wallet, tier: 1, block: '1' };
      await createIndexerSchema(writer.pool);
      await writer.requestForge(request);
      // A sales history of three pages at 100 a page, for the example's walk.
      await writer.pool.query(`INSERT INTO indexer.sales SELECT 'history-' || i, i, $1, $1, 1000 + i, 1, 1, i FROM generate_series(1, 250) AS i`, [wallet]);
      // 4. The simulator, for the linked wallet, as written.
      expect(simulate).toMatch(/^npm run simulate -- --wallet <the linked wallet>\s/);
      terminal(simulate!.replace('<the linked wallet>', wallet), root, { HATCHERY_DATA_DIR: stack.dataDir });

      const page = await browser.newPage();
      const failures: string[] = [];
      const lines: string[] = [];
      page.on('pageerror', (error) => failures.push(String(error)));
      page.on('console', (message) => lines.push(message.text()));
      // The chain fulfils the test's request once the app has read the open ones, in the simulator's latest block (the listener's cursor only moves on).
      page.on('requestfinished', (finished) => {
        if (!finished.url().includes('/forge-requests')) return;
        void stack
          .sql<{ block: string }>(
            `SELECT greatest((SELECT max(updated_at_block) FROM indexer.listings), (SELECT max(block_number) FROM indexer.forge_requests),
               (SELECT max(fulfilled_at_block) FROM indexer.forge_requests), (SELECT max(block_number) FROM indexer.sales), 1)::text AS block`,
          )
          .then(([row]) => writer.fulfil({ ...request, tokenId: '777', editionId: '7', block: row!.block }));
      });
      await withWallet(page, account);
      const token = await stack.idp.signToken({ uid: `example-${process.pid}`, email: `example-${process.pid}@example.com`, name: 'Example' });
      // Firebase Auth's shape: currentUser.getIdToken().
      await page.addInitScript((idToken) => {
        (globalThis as unknown as { auth: unknown }).auth = { currentUser: { getIdToken: async () => idToken } };
      }, token);
      await page.goto(`${origin}/`);
      // Told by the event; by the endpoint 45 s later only if the event went by while the app read the list.
      await expect
        .poll(() => lines.find((line) => line.startsWith('forged')) ?? failures[0], { timeout: 100_000 })
        .toMatch(/^forged \{requestId: '?\d+'?, tokenId: '?\d+'?, editionId: '?\d+'?, source: '?(event|api)'?\}/);
      await writer.end();
      await expect.poll(() => lines.some((line) => line.startsWith('reload listings')), { timeout: 30_000 }).toBe(true);
      expect(lines.find((line) => / listings, first /.test(line))).toBeDefined();
      // The walk of the whole sales history: the 250 written before, and those simulate added before it ended.
      const walked = Number(/^(\d+) sales in the history, \d+ wei in all$/.exec(lines.find((line) => line.includes(' sales in the history')) ?? '')?.[1]);
      const [sales] = await stack.sql<{ count: number }>('SELECT count(*)::int AS count FROM indexer.sales');
      expect(walked).toBeGreaterThanOrEqual(250);
      expect(walked).toBeLessThanOrEqual(sales!.count);
      expect(failures).toEqual([]);
      const [row] = await stack.sql<{ wallet_address: string }>(`SELECT wallet_address FROM hatchery.accounts WHERE id = $1`, [`example-${process.pid}`]);
      expect(row?.wallet_address).toBe(wallet);
      // The server and the simulator ran all along.
      expect(commands.map((child) => child.exitCode)).toEqual([null, null]);
    } finally {
      // Ctrl-C in each terminal (its whole process group), then SIGKILL for any that did not stop.
      for (const child of commands) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        process.kill(-child.pid!, 'SIGINT');
        const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
        await once(child, 'exit');
        clearTimeout(timer);
      }
      await rm(folder, { recursive: true, force: true });
    }
  });
});
