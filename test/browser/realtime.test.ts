import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startTestStack, type TestStack } from '../support/stack';
import { hasChromium, launchChromium, needsChromium, type Browser } from './chromium';
import { serveOriginPage, type OriginPage } from './page';

/** Realtime events and the API in Chromium, from an allowed origin and from one that is not. */
interface RunResult {
  subscribed?: boolean;
  hubError?: string;
  editions?: { status: number; body: { items: unknown[] } };
  editionsError?: string;
  me?: { status: number; body: { id: string } };
  meError?: string;
}
interface SeenEvent {
  name: string;
  event: Record<string, string | number>;
}

const wallet = '0x00000000000000000000000000000000000000Ab';
const repository = join(import.meta.dirname, '..', '..');

describe.skipIf(!hasChromium)(`realtime in Chromium${needsChromium}`, () => {
  let allowed: OriginPage;
  let other: OriginPage;
  let stack: TestStack;
  let browser: Browser;

  beforeAll(async () => {
    [allowed, other] = await Promise.all([serveOriginPage(), serveOriginPage()]);
    [stack, browser] = await Promise.all([startTestStack({ env: { CORS_ORIGINS: allowed.origin } }), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await Promise.all([allowed?.close(), other?.close()]);
  });

  const run = async (page: Page, skipNegotiation: boolean): Promise<RunResult> => {
    const token = await stack.idp.signToken({ uid: 'browser-user', email: 'browser@example.com', name: 'Browser User' });
    return page.evaluate((input) => (globalThis as unknown as { run(i: typeof input): Promise<RunResult> }).run(input), {
      api: stack.url,
      wallet,
      token,
      skipNegotiation,
    });
  };

  /** `npm run simulate` against this stack, found through its data dir: listings, sales and forge fulfilments for `wallet`. */
  const simulate = () =>
    new Promise<string>((resolve, reject) => {
      const child = spawn('npm', ['run', '-s', 'simulate', '--', '--every', '200', '--count', '4', '--wallet', wallet], {
        cwd: repository,
        env: { ...process.env, HATCHERY_DATA_DIR: stack.dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`simulate exited ${code}:\n${output}`))));
    });

  it('an allowed origin gets marketChanged and its wallet’s forgeFulfilled while the simulator runs, and calls the API with CORS', async () => {
    const page = await browser.newPage();
    await page.goto(allowed.origin);
    const result = await run(page, false);
    expect(result).toMatchObject({ subscribed: true, editions: { status: 200 }, me: { status: 200, body: { id: 'browser-user' } } });

    const output = await simulate();
    const fulfilled = [...output.matchAll(/fulfilled forge request\(s\) ([\d, ]+) in two commits/g)].flatMap((match) => match[1]!.split(', '));
    expect(fulfilled).toHaveLength(2);

    const seen = async () => page.evaluate(() => (globalThis as unknown as { events: SeenEvent[] }).events);
    while ((await seen()).filter((event) => event.name === 'forgeFulfilled').length < fulfilled.length) await page.waitForTimeout(200);
    const events = await seen();
    expect(events.some((event) => event.name === 'marketChanged' && typeof event.event.count === 'number')).toBe(true);
    expect(
      events
        .filter((event) => event.name === 'forgeFulfilled')
        .map((event) => event.event.requestId)
        .sort(),
    ).toEqual([...fulfilled].sort());
    await browser.screenshot(page, 'realtime-allowed-origin');
    await page.close();
  }, 90_000);

  it('another origin is refused: negotiate and the API give it no CORS, the hub’s WebSocket answers 403', async () => {
    const page = await browser.newPage();
    await page.goto(other.origin);
    const negotiated = await run(page, false);
    expect(negotiated.subscribed).toBeUndefined();
    expect(negotiated.hubError).toMatch(/Failed to fetch|Failed to complete negotiation/);
    expect(negotiated.editionsError).toMatch(/Failed to fetch/);
    expect(negotiated.meError).toMatch(/Failed to fetch/);
    const direct = await run(page, true);
    expect(direct.subscribed).toBeUndefined();
    expect(direct.hubError).toMatch(/WebSocket/);
    await browser.screenshot(page, 'realtime-refused-origin');
    await page.close();

    // What the browser hides from the page: the status the hub gave.
    const status = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${stack.url.replace('http', 'ws')}/hubs/events`, { origin: other.origin });
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('open', () => resolve(101));
      socket.on('error', () => undefined);
    });
    expect(status).toBe(403);
  }, 60_000);
});
