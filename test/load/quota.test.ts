import { ApiGatewayManagementApiClient, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { config } from '@hatchery/platform/config';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { budgetShares, nextBroadcastAt, pacer } from '@hatchery/core/realtime/budget';
import { isThrottled, retryAfterMs } from '@hatchery/platform/aws/throttling';
import { connectionStore } from '@hatchery/core/realtime/connections';
import { inOnePage, post } from '@hatchery/core/realtime/fan-out';
import { refusalOf, type HubConnections } from '@hatchery/platform/aws/management';
import { hubPath } from '@hatchery/functions/routes/realtime';
import { startChild, type Child } from '../support/child';
import { load, settlesAtOnce } from '../support/pace';
import { startTestStack, type TestStack } from '../support/stack';
import { crowdMain, type CrowdReport as Report } from '../stack/realtime/crowd';
import { indexer, sleep, waitFor, wallet } from '../stack/realtime/support';

/**
 * Realtime inside the account's API Gateway quota, scaled down ten times:
 * the local gateway models the throttle (1,000 requests a second, a burst of
 * 500) shared by HTTP, the hub and the management API; the fan-out budget is
 * half of it. For 30 s, 5,000 connected clients, a listing change every
 * 500 ms, 100 HTTP reads a second and a forge fulfilment for one watched
 * wallet every 5 s.
 */
const quota = { perSecond: 1_000, burst: 500 };
const budget = 500;
const audience = 5_000;
const runMs = 30_000;
const RS = '\u001e';
const watched = wallet(31);
/** Wall-clock milliseconds, comparable with the client process's. */
const wallMs = () => performance.timeOrigin + performance.now();

let stack: TestStack;
let writes: ReturnType<typeof indexer>;
let clients: Child;

/** The watched wallet's browser: a raw SignalR client in this process, subscribed to the wallet, timing each forgeFulfilled. */
async function watchWallet(url: string): Promise<{ arrivals: Map<string, number>; close(): void }> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  const arrivals = new Map<string, number>();
  const subscribed = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => socket.send(`{"protocol":"json","version":1}${RS}`));
    socket.on('message', (data) => {
      for (const record of data.toString().split(RS)) {
        if (!record) continue;
        if (record === '{}') socket.send(`${JSON.stringify({ type: 1, invocationId: 'w', target: 'Subscribe', arguments: [watched] })}${RS}`);
        const parsed = JSON.parse(record) as { type?: number; invocationId?: string; target?: string; arguments?: Array<{ requestId: string }> };
        if (parsed.type === 3 && parsed.invocationId === 'w') resolve();
        if (parsed.target === 'forgeFulfilled') arrivals.set(parsed.arguments![0]!.requestId, wallMs());
      }
    });
  });
  await subscribed;
  return { arrivals, close: () => socket.terminate() };
}

/** 100 GET requests a second, spread evenly, until `until`; the statuses they got. */
async function readAtHundredASecond(until: number): Promise<number[]> {
  const statuses: Promise<number>[] = [];
  for (let at = Date.now(); at < until; at += 10) {
    await sleep(Math.max(0, at - Date.now()));
    statuses.push(stack.get('/marketplace/listings?pageSize=1').then(async (response) => (await response.arrayBuffer(), response.status)));
  }
  return Promise.all(statuses);
}

beforeAll(async () => {
  stack = await startTestStack({
    env: {
      HATCHERY_QUOTA_PER_SECOND: String(quota.perSecond),
      HATCHERY_QUOTA_BURST: String(quota.burst),
      FANOUT_POSTS_PER_SECOND: String(budget),
    },
  });
  writes = indexer(stack);
  await createIndexerSchema(writes.pool);
  clients = await startChild(crowdMain);
});
afterAll(async () => {
  clients?.close();
  await writes?.end();
  await stack?.stop();
});

/** A raw SignalR client in this process, once its handshake is answered, with every frame it receives; and its connection id. */
async function handshaken(url: string): Promise<{ id: string; frames: string[]; send(text: string): void; close(): void }> {
  const before = new Set(stack.hub.connections.keys());
  const socket = new WebSocket(url, { perMessageDeflate: false });
  const frames: string[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => socket.send(`{"protocol":"json","version":1}${RS}`));
    socket.once('message', () => {
      socket.on('message', (data) => frames.push(data.toString()));
      resolve();
    });
  });
  const id = [...stack.hub.connections.keys()].find((key) => !before.has(key))!;
  return { id, frames, send: (text) => socket.send(text), close: () => socket.terminate() };
}

describe('the fan-out budget’s parts', () => {
  it('spaces posts at the rate, lets a burst through, and holds every post for a Retry-After', async () => {
    const paced = pacer(200);
    const started = performance.now();
    for (let i = 0; i < 41; i++) await paced.take();
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    // A burst of 5 goes without waiting on a timer, however slow the machine.
    const bursting = pacer(10, 5);
    for (let i = 0; i < 5; i++) expect(await settlesAtOnce(bursting.take()), `post ${i + 1} of the burst`).toBe(true);
    paced.throttled(retryAfterMs({ name: 'LimitExceededException', $response: { headers: { 'retry-after': '1' } } }));
    const pausedAt = performance.now();
    await paced.take();
    expect(performance.now() - pausedAt).toBeGreaterThanOrEqual(990);
    expect(paced.throttles).toBe(1);
  });

  it('knows a 429 by the SDK’s names or its status, and reads Retry-After in seconds or as a date', () => {
    for (const error of [
      { name: 'ThrottlingException' },
      { name: 'TooManyRequestsException' },
      { name: 'LimitExceededException' },
      { $metadata: { httpStatusCode: 429 } },
    ]) {
      expect(isThrottled(error), JSON.stringify(error)).toBe(true);
    }
    expect(isThrottled({ name: 'GoneException', $metadata: { httpStatusCode: 410 } })).toBe(false);
    expect(isThrottled(undefined)).toBe(false);
    expect(retryAfterMs({ $response: { headers: { 'retry-after': '2' } } })).toBe(2_000);
    expect(retryAfterMs({ $response: { headers: { 'retry-after': new Date(10_000).toUTCString() } } }, 7_000)).toBe(3_000);
    expect(retryAfterMs({ $response: { headers: {} } })).toBeUndefined();
  });

  it('keeps a tenth for targeted events, and spaces broadcasts by their audience at the rest or the minimum interval', () => {
    expect(budgetShares({ postsPerSecond: 5_000, minIntervalMs: 1_000 })).toEqual({ broadcast: 4_500, targeted: 500 });
    expect(budgetShares({ postsPerSecond: 0, minIntervalMs: 1_000 })).toBeUndefined();
    expect(nextBroadcastAt(100, 45_000, { postsPerSecond: 5_000, minIntervalMs: 1_000 })).toBe(100 + 10_000);
    expect(nextBroadcastAt(100, 450, { postsPerSecond: 5_000, minIntervalMs: 1_000 })).toBe(100 + 1_000);
    expect(nextBroadcastAt(100, 1_000_000, { postsPerSecond: 0, minIntervalMs: 0 })).toBe(100);
  });
});

describe('the local gateway’s model of the throttle', () => {
  const url = () => `${stack.url.replace('http', 'ws')}${hubPath}`;
  afterEach(() => stack.quota.configure(quota));

  it('answers an HTTP request, a connect, a message in and a management call over the quota as API Gateway does', async () => {
    const client = await handshaken(url());
    // One request, then none for 100 s: everything after the first is over the quota.
    stack.quota.configure({ perSecond: 0.01, burst: 1 });
    try {
      expect((await stack.get('/health')).status).not.toBe(429);
      const throttled = await stack.get('/health');
      expect(throttled.status).toBe(429);
      expect(throttled.headers.get('content-type')).toBe('application/json');
      expect(await throttled.json()).toEqual({ message: 'Too Many Requests' });

      const management = await fetch(`${stack.url}/@connections/${encodeURIComponent(client.id)}`, { method: 'POST', body: '{}' });
      expect(management.status).toBe(429);
      expect(management.headers.get('x-amzn-errortype')).toBe('LimitExceededException');
      expect(await management.json()).toEqual({ message: 'Too Many Requests' });
      // The AWS SDK's client, without retries, names it as isThrottled expects.
      const sdk = new ApiGatewayManagementApiClient({ endpoint: stack.url, region: config().AWS_REGION, maxAttempts: 1 });
      const error = await sdk
        .send(new PostToConnectionCommand({ ConnectionId: client.id, Data: new TextEncoder().encode('{}') }))
        .catch((failure: unknown) => failure);
      sdk.destroy();
      expect(error).toMatchObject({ name: 'LimitExceededException', $metadata: { httpStatusCode: 429 } });
      expect(isThrottled(error)).toBe(true);

      const refused = await new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(url());
        socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.once('open', () => reject(new Error('connected over the quota')));
      });
      expect(refused).toBe(429);

      // A ping over the quota reaches no route ($default would answer it with a ping); the gateway says so instead.
      client.send(`{"type":6}${RS}`);
      await waitFor(() => client.frames.length > 0, 'the answer to a ping over the quota');
      expect(client.frames).toEqual([expect.stringMatching(/^\{"message":"Too many requests","connectionId":"[^"]+","requestId":"[^"]+"\}$/)]);
      expect(stack.quota.stats().throttled).toMatchObject({ http: 1, connect: 1, message: 1, management: 2 });
    } finally {
      client.close();
    }
  });

  it('a paced fan-out answered 429 by a throttled management API slows down and tries again, and reaches everyone once', async () => {
    const clients: Awaited<ReturnType<typeof handshaken>>[] = [];
    for (let i = 0; i < 10; i++) clients.push(await handshaken(url()));
    stack.quota.configure({ perSecond: 20, burst: 5 });
    // The SDK's client with no retries of its own, so every 429 reaches the fan-out's pacer.
    const sdk = new ApiGatewayManagementApiClient({ endpoint: stack.url, region: config().AWS_REGION, maxAttempts: 1 });
    const paced = pacer(100);
    try {
      const connections: HubConnections = {
        post: async (connectionId, data) => {
          try {
            await sdk.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: typeof data === 'string' ? new TextEncoder().encode(data) : data }));
            return 'sent';
          } catch (error) {
            const refusal = refusalOf(error);
            if (refusal) return refusal;
            throw error;
          }
        },
        close: async () => undefined,
      };
      const parts = { connections, store: connectionStore(), concurrency: 8, log: pino({ level: 'silent' }), pace: paced };
      const delivery = await post(
        inOnePage(clients.map((client) => client.id)),
        `{"type":1,"target":"marketChanged","arguments":[{"count":1,"maxBlock":"1","version":1}]}${RS}`,
        parts,
      );
      expect(delivery).toEqual({ sent: 10, gone: 0, failed: 0, skipped: 0 });
      expect(paced.throttles).toBeGreaterThan(0);
      // Then one last frame to each, past the throttle: a connection's frames come in order, so once it has that one, it
      // has every frame the fan-out's posts sent it.
      stack.quota.configure(quota);
      for (const client of clients) {
        const last = await fetch(`${stack.url}/@connections/${encodeURIComponent(client.id)}`, { method: 'POST', body: 'last' });
        expect(last.status).toBe(200);
      }
      await waitFor(() => clients.every((client) => client.frames.includes('last')), 'the last frame at every client');
      for (const client of clients) expect(client.frames.filter((frame) => frame.includes('marketChanged'))).toHaveLength(1);
    } finally {
      sdk.destroy();
      for (const client of clients) client.close();
    }
  });
});

describe('realtime inside the account’s API Gateway quota (scaled down: 1,000 a second, 500 burst)', () => {
  it('keeps HTTP, forgeFulfilled and every client’s latest marketChanged inside the quota while 5,000 clients follow a busy market', async () => {
    const url = `${stack.url.replace('http', 'ws')}${hubPath}`;
    const connectStarted = performance.now();
    const { connected } = await clients.request<{ connected: number; failed: number }>({ cmd: 'connect', url, count: audience }, 'connected');
    console.log(`connected ${connected} clients in ${((performance.now() - connectStarted) / 1000).toFixed(1)} s`);
    expect(connected).toBe(audience);
    const wallet = await watchWallet(url);
    await stack.listener!.idle();
    // The machine's pace for the bounds below: a forgeFulfilled to the watched wallet with the market quiet.
    const { requestId: idleRequest } = await writes.fulfilFor(watched);
    const idleCommittedAt = wallMs();
    await waitFor(() => wallet.arrivals.has(idleRequest), 'the forgeFulfilled with the market quiet', 30_000);
    const idleForgeMs = wallet.arrivals.get(idleRequest)! - idleCommittedAt;
    await sleep(2_000);
    stack.quota.reset();

    const started = Date.now();
    const until = started + runMs;
    const fulfilments: Array<{ requestId: string; committedAt: number }> = [];
    const market = (async () => {
      for (let at = started; at < until; at += 500) {
        await sleep(Math.max(0, at - Date.now()));
        await writes.listToken();
      }
    })();
    const forge = (async () => {
      for (let at = started + 2_500; at < until; at += 5_000) {
        await sleep(Math.max(0, at - Date.now()));
        const { requestId } = await writes.fulfilFor(watched);
        fulfilments.push({ requestId, committedAt: wallMs() });
      }
    })();
    const statuses = await readAtHundredASecond(until);
    await Promise.all([market, forge]);
    const quietAt = wallMs();
    const final = await writes.snapshot();

    // One broadcast takes the audience at the broadcast budget; the one in flight when the market went quiet ends first.
    const shares = budgetShares({ postsPerSecond: budget, minIntervalMs: config().FANOUT_MIN_INTERVAL_MS })!;
    const broadcastMs = (audience / shares.broadcast) * 1000;
    // Beyond the broadcasts, 3 s, or ten times the quiet forgeFulfilled on a machine so loaded that those take longer.
    const marginMs = Math.max(3_000, 10 * idleForgeMs);
    const boundMs = 2 * broadcastMs + config().FANOUT_MIN_INTERVAL_MS + marginMs;
    // A forgeFulfilled never waits behind a broadcast: 2 s, or ten times the quiet one, whichever is longer.
    const forgeBoundMs = Math.max(2_000, 10 * idleForgeMs);
    const report = async () => clients.request<Report>({ cmd: 'report', final }, 'report');
    let outcome = await report();
    // Waits for every client's last marketChanged; the deadline only ends a run that never drains.
    for (const deadline = quietAt + 2 * boundMs; outcome.behind > 0 && wallMs() < deadline; outcome = await report()) await sleep(500);

    const throttled = statuses.filter((status) => status === 429).length;
    const latencies = fulfilments.map(({ requestId, committedAt }) => (wallet.arrivals.get(requestId) ?? Infinity) - committedAt);
    const posts = [...stack.quota.perSecond('management').entries()].filter(([second]) => second * 1000 >= started && second * 1000 < until);
    const { behind, lastArrival, duplicates } = outcome;
    console.log(
      JSON.stringify({
        requests: statuses.length,
        throttled,
        forgeLatenciesMs: latencies.map(Math.round),
        forgeBoundMs: Math.round(forgeBoundMs),
        idleForgeMs: Math.round(idleForgeMs),
        postsPerSecondMax: Math.max(...posts.map(([, count]) => count)),
        behind,
        finalAfterQuietMs: Math.round(lastArrival - quietAt),
        boundMs: Math.round(boundMs),
        duplicates,
        throttledFrames: outcome.throttledFrames,
        clientProcess: { cpuSeconds: Math.round(outcome.cost.cpuSeconds), rssMb: Math.round(outcome.cost.rssMb) },
        quota: stack.quota.stats(),
        listener: stack.listener!.stats(),
        load: load(),
      }),
    );
    wallet.close();

    expect(statuses.length).toBeGreaterThanOrEqual(2_900);
    expect(throttled / statuses.length).toBeLessThan(0.01);
    expect(fulfilments).toHaveLength(6);
    for (const latency of latencies) expect(latency).toBeLessThan(forgeBoundMs);
    // Whole seconds inside the run: the listener's posts and every shard's together, within the budget (10% for the seconds' edges).
    expect(posts.length).toBeGreaterThanOrEqual(runMs / 1000 - 1);
    for (const [, count] of posts) expect(count).toBeLessThanOrEqual(budget * 1.1);
    expect(behind).toBe(0);
    expect(lastArrival - quietAt).toBeLessThan(boundMs);
    expect(duplicates).toBe(0);
  }, 240_000);
});
