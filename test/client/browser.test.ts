import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { hexToBytes, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexer } from '../realtime/support';
import { startTestStack, type TestStack } from '../support/stack';
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
      page.evaluate((args) => (globalThis as unknown as { forgeNext(args: unknown): Promise<{ source: string; requestId: string }> }).forgeNext(args), {
        api: stack.url,
        wallet,
      });

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
    await page.waitForFunction((expected) => {
      const last = (globalThis as unknown as { seen: Seen }).seen.market.at(-1);
      return JSON.stringify(last && { count: last.count, maxBlock: last.maxBlock }) === JSON.stringify(expected);
    }, snapshot);
    const { log } = await seen();
    expect(log.indexOf('reconnected; subscriptions restored')).toBeGreaterThan(0);
    expect(log.slice(log.indexOf('reconnected; subscriptions restored')).some((line) => line.startsWith('forgeFulfilled'))).toBe(true);
    await browser.screenshot(page, 'client-browser');
    expect(failures).toEqual([]);
  });
});
