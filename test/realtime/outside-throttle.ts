import { afterEach, expect } from 'vitest';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { hubPath } from '@hatchery/functions/routes/realtime';
import { startChild, type Child } from '../support/child';
import { isHandshakeAnswer, managementProxy, type ManagementProxy } from '../support/management-proxy';
import { startTestStack, type TestStack } from '../support/stack';
import { crowdMain, type CrowdReport } from './crowd';
import { indexer, sleep } from './support';

/**
 * What the outside-throttle tests share (each runs in a process of its own:
 * the stack's handlers read their configuration once per process). 5,000 hub
 * clients behind a throttle the stack is not told about: a proxy in
 * front of the management endpoint (WEBSOCKET_MANAGEMENT_ENDPOINT) that
 * answers 429 beyond its rate, as another tenant of the account's API
 * Gateway quota would make it. With the fan-out budget off, every client
 * still ends on the final listings; with it on, the pacers' memory keeps the
 * 429s rare and HTTP reads, which share the stack's own quota model, almost
 * free of them.
 */
const audience = 5_000;
export const runMs = 20_000;
const wallMs = () => performance.timeOrigin + performance.now();

interface Throttle extends ManagementProxy {
  refused: number;
  forwarded: number;
}

/**
 * A token bucket of `perSecond` (and as many at once) in front of the stack's management API: 429
 * LimitExceededException beyond. Handshake answers pass: the crowd's clients wait for theirs without a timeout, and
 * the test is about events.
 */
async function outsideThrottle(perSecond: number, target: () => string): Promise<Throttle> {
  let tokens = perSecond;
  let filledAt = performance.now();
  const counts = { refused: 0, forwarded: 0 };
  const proxy = await managementProxy(target, (call) => {
    if (isHandshakeAnswer(call)) return 'forward';
    const now = performance.now();
    tokens = Math.min(perSecond, tokens + ((now - filledAt) / 1000) * perSecond);
    filledAt = now;
    if (tokens < 1) {
      counts.refused++;
      return { status: 429, type: 'LimitExceededException' };
    }
    tokens--;
    counts.forwarded++;
    return 'forward';
  });
  return Object.assign(counts, proxy);
}

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A stack behind the outside throttle, 5,000 clients, and a listing change every 500 ms for `runMs` with 100 HTTP reads a second. */
export async function busyMarket(options: { budget: number; throttlePerSecond: number; quota?: { perSecond: number; burst: number } }) {
  let stack: TestStack | undefined;
  const throttle = await outsideThrottle(options.throttlePerSecond, () => stack!.url);
  cleanup.push(() => throttle.close());
  stack = await startTestStack({
    demoData: false,
    managementEndpoint: throttle.url,
    // Passed to the listener itself: the configuration is read once per process, and this file starts two stacks.
    listener: { budget: { postsPerSecond: options.budget, minIntervalMs: 1_000 } },
    ...(options.quota && { quota: options.quota }),
  });
  const running = stack;
  cleanup.push(() => running.stop());
  const writes = indexer(running);
  cleanup.push(() => writes.end());
  await createIndexerSchema(writes.pool);
  const crowd: Child = await startChild(crowdMain);
  cleanup.push(() => crowd.close());
  const { connected } = await crowd.request<{ connected: number }>(
    { cmd: 'connect', url: `${running.url.replace('http', 'ws')}${hubPath}`, count: audience },
    'connected',
  );
  expect(connected).toBe(audience);
  await running.listener!.idle();
  await sleep(2_000);
  const refusedBefore = throttle.refused;

  const started = Date.now();
  const until = started + runMs;
  const market = (async () => {
    for (let at = started; at < until; at += 500) {
      await sleep(Math.max(0, at - Date.now()));
      await writes.listToken();
    }
  })();
  const reads: Promise<number>[] = [];
  for (let at = started; at < until; at += 10) {
    await sleep(Math.max(0, at - Date.now()));
    reads.push(running.get('/marketplace/listings?pageSize=1').then(async (response) => (await response.arrayBuffer(), response.status)));
  }
  await market;
  const statuses = await Promise.all(reads);
  const refusedDuringRun = throttle.refused - refusedBefore;
  const quietAt = wallMs();
  const final = await writes.snapshot();
  const report = () => crowd.request<CrowdReport>({ cmd: 'report', final }, 'report');
  let outcome = await report();
  for (const deadline = quietAt + 90_000; outcome.behind > 0 && wallMs() < deadline; outcome = await report()) await sleep(1_000);
  const figures = {
    budget: options.budget,
    throttlePerSecond: options.throttlePerSecond,
    refusedDuringRun,
    reads: statuses.length,
    reads429: statuses.filter((status) => status === 429).length,
    behind: outcome.behind,
    duplicates: outcome.duplicates,
    finalAfterQuietMs: Math.round(outcome.lastArrival - quietAt),
    listener: running.listener!.stats(),
  };
  console.log(JSON.stringify(figures));
  return figures;
}
