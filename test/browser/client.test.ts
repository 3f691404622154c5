import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { hexToBytes, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexer, waitFor } from '../stack/realtime/support';
import { isHandshakeAnswer, managementProxy, type ManagementProxy } from '../support/management-proxy';
import { startTestStack, type TestStack } from '../support/stack';
import { serveAppPage, type AppPage } from '../stack/client/app-page';
import { hasChromium, launchChromium, needsChromium, type Browser } from './chromium';

const root = join(import.meta.dirname, '..', '..');

interface Gate {
  /** pass: forward every call; refuse: answer posts 429, as a throttle does; gone: answer posts 410, as for a connection API Gateway lost. */
  mode: 'pass' | 'refuse' | 'gone';
  refused: number;
}

/** The stack's management API behind a gate the test opens and shuts; a handshake's answer always goes through, the gate stands for trouble with events. */
async function managementGate(target: () => string): Promise<Gate & ManagementProxy> {
  const gate: Gate = { mode: 'pass', refused: 0 };
  const proxy = await managementProxy(target, (call) => {
    if (call.method !== 'POST' || gate.mode === 'pass' || isHandshakeAnswer(call)) return 'forward';
    gate.refused++;
    return gate.mode === 'refuse' ? { status: 429, type: 'LimitExceededException' } : { status: 410, type: 'GoneException' };
  });
  return Object.assign(gate, proxy);
}

describe.skipIf(!hasChromium)(`@hatchery/client in headless Chromium${needsChromium}`, () => {
  let stack: TestStack;
  let app: AppPage;
  let browser: Browser;
  let simulator: ChildProcess | undefined;
  let gate: Gate & ManagementProxy;

  beforeAll(async () => {
    app = await serveAppPage();
    gate = await managementGate(() => stack.url);
    // The page is another origin, allowed as a game's front end would be; the stack's posts go through the gate.
    stack = await startTestStack({ env: { CORS_ORIGINS: app.origin }, managementEndpoint: gate.url });
    browser = await launchChromium();
  });
  afterAll(async () => {
    simulator?.kill('SIGTERM');
    await browser?.close();
    await stack?.stop();
    await app?.close();
    gate?.close();
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

  it('ends on the final listings and gets each forgeFulfilled once when its posts are refused for a while, and when its connection is lost', {
    timeout: 120_000,
  }, async () => {
    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(String(error)));
    await withWallet(page);
    await page.goto(`${app.origin}/`);
    const token = await stack.idp.signToken({ uid: `missed-${process.pid}`, email: `missed-${process.pid}@example.com`, name: 'Missed' });
    type Seen = { forge: Array<{ requestId: string; caughtUp?: boolean }>; listings?: { totalCount: number; tokenIds: string[] }; restored: number };
    const seen = () => page.evaluate(() => (globalThis as unknown as { seen: Seen }).seen);
    const wallet = await page.evaluate((args) => (globalThis as unknown as { run(args: unknown): Promise<string> }).run(args), { api: stack.url, token });
    const writes = indexer(stack);
    try {
      const listingsNow = async () => {
        const body = (await (await stack.get('/marketplace/listings?pageSize=100')).json()) as { totalCount: number; items: Array<{ tokenId: string }> };
        return { totalCount: body.totalCount, tokenIds: body.items.map((item) => item.tokenId) };
      };
      const onFinalListings = async () => {
        const final = await listingsNow();
        await page.waitForFunction((expected) => JSON.stringify((globalThis as unknown as { seen: Seen }).seen.listings) === expected, JSON.stringify(final), {
          timeout: 60_000,
        });
      };

      /** Until the stack's listener has taken both events of a listing and a fulfilment, and has nothing in flight. */
      const handled = async (before: { marketChanged: number; forgeFulfilled: number }) => {
        await waitFor(
          () => stack.listener!.stats().marketChanged > before.marketChanged && stack.listener!.stats().forgeFulfilled > before.forgeFulfilled,
          'the listener to take both events',
          30_000,
        );
        await stack.listener!.idle();
      };

      // Refused (429) for a while: the posts are tried again until the gate opens, within their deadline.
      gate.mode = 'refuse';
      const refusedBefore = gate.refused;
      await writes.listToken();
      const refused = await writes.fulfilFor(wallet);
      await waitFor(() => gate.refused > refusedBefore, 'a post refused', 30_000);
      // And refused again, however long the first took: refusals for a while, not one.
      const firstRefusals = gate.refused;
      await waitFor(() => gate.refused > firstRefusals, 'a post refused again', 30_000);
      gate.mode = 'pass';
      await page.waitForFunction((id) => (globalThis as unknown as { seen: Seen }).seen.forge.some((event) => event.requestId === id), refused.requestId, {
        timeout: 60_000,
      });
      await onFinalListings();

      // Lost: API Gateway answers 410 for the connection, so the hub forgets it, and the client learns only when its socket closes.
      gate.mode = 'gone';
      const beforeMissed = stack.listener!.stats();
      await writes.listToken();
      const missed = await writes.fulfilFor(wallet);
      await handled(beforeMissed);
      gate.mode = 'pass';
      const restoredBefore = (await seen()).restored;
      for (const connection of stack.hub.connections.values()) connection.socket.close(1012, 'Service Restart');
      await page.waitForFunction((count) => (globalThis as unknown as { seen: Seen }).seen.restored > count, restoredBefore);
      await page.waitForFunction((id) => (globalThis as unknown as { seen: Seen }).seen.forge.some((event) => event.requestId === id), missed.requestId, {
        timeout: 30_000,
      });
      await onFinalListings();

      // One more, live: the stream goes on after the catch-up.
      const live = await writes.fulfilFor(wallet);
      await page.waitForFunction((id) => (globalThis as unknown as { seen: Seen }).seen.forge.some((event) => event.requestId === id), live.requestId, {
        timeout: 30_000,
      });
      // With nothing left in flight, the listener has sent what it will: none of them again.
      await stack.listener!.idle();
      const { forge } = await seen();
      const ids = forge.map((event) => event.requestId);
      expect(new Set(ids).size, 'each forgeFulfilled once').toBe(ids.length);
      expect(ids).toEqual(expect.arrayContaining([refused.requestId, missed.requestId, live.requestId]));
      expect(forge.find((event) => event.requestId === missed.requestId)?.caughtUp).toBe(true);
      await browser.screenshot(page, 'client-missed-events');
      expect(failures).toEqual([]);
    } finally {
      gate.mode = 'pass';
      await writes.end();
    }
  });
});
