import { spawn } from 'node:child_process';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '@hatchery/platform/config';
import { createIndexerSchema } from '@hatchery/core/indexer/schema';
import { budgetShares } from '@hatchery/core/realtime/budget';
import { hubPath } from '@hatchery/functions/routes/realtime';
import { startTestStack, type TestStack } from '../support/stack';
import { indexer, sleep, wallet } from './support';

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
let clients: ClientProcess;

interface Report {
  /** Connections whose last marketChanged is not the final listings. */
  behind: number;
  /** When the last connection had its last marketChanged (wall clock). */
  lastArrival: number;
  /** Frames a connection received more than once. */
  duplicates: number;
  /** Frames the gateway sent for a message in over the quota. */
  throttledFrames: number;
}

interface ClientProcess {
  request<T>(command: object, reply: string): Promise<T>;
  close(): void;
}

/**
 * The 5,000 hub clients, in a process of their own (10,000 sockets would
 * crowd the stack's event loop): plain WebSocket clients speaking the SignalR
 * JSON handshake, keeping each connection's last marketChanged and counting
 * any frame that reaches a connection twice.
 */
function clientMain(): void {
  const { WebSocket: Socket } = require('ws') as typeof import('ws');
  const separator = '\u001e';
  const now = () => performance.timeOrigin + performance.now();
  const sockets: import('ws').WebSocket[] = [];
  const last: Array<{ count: number; maxBlock: string; version: number; at: number } | null> = [];
  const seen: Array<Set<string>> = [];
  let duplicates = 0;
  let throttledFrames = 0;
  const open = (url: string, index: number) =>
    new Promise<void>((resolve, reject) => {
      const socket = new Socket(url, { perMessageDeflate: false });
      const fail = (error: Error) => {
        socket.terminate();
        reject(error);
      };
      socket.once('error', fail);
      socket.once('open', () => socket.send(`{"protocol":"json","version":1}${separator}`));
      socket.once('message', (data) => {
        if (data.toString() !== `{}${separator}`) return fail(new Error(`handshake answered ${data.toString()}`));
        sockets[index] = socket;
        last[index] = null;
        seen[index] = new Set();
        socket.on('message', (more) => {
          for (const record of more.toString().split(separator)) {
            if (!record) continue;
            if (seen[index]!.has(record)) duplicates++;
            seen[index]!.add(record);
            if (record.startsWith('{"message":"Too many requests"')) throttledFrames++;
            const parsed = JSON.parse(record) as { target?: string; arguments?: Array<{ count: number; maxBlock: string; version: number }> };
            if (parsed.target === 'marketChanged') last[index] = { ...parsed.arguments![0]!, at: now() };
          }
        });
        resolve();
      });
    });
  process.on('message', async (command: { cmd: string; url?: string; count?: number; final?: { count: number; maxBlock: string } }) => {
    if (command.cmd === 'connect') {
      let next = 0;
      let failed = 0;
      // A connect or handshake over the quota is refused (429, or the gateway's frame): tried again, as a client reconnects.
      const connect = async (index: number) => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await open(command.url!, index);
          } catch (error) {
            failed++;
            if (attempt === 20) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
          }
        }
      };
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < command.count!) await connect(next++).catch(() => undefined);
        }),
      );
      process.send!({ cmd: 'connected', connected: sockets.filter(Boolean).length, failed });
    } else if (command.cmd === 'report') {
      const { count, maxBlock } = command.final!;
      const behind = last.filter((each) => !(each?.count === count && each.maxBlock === maxBlock)).length;
      const lastArrival = Math.max(...last.map((each) => each?.at ?? Infinity));
      process.send!({ cmd: 'report', behind, lastArrival, duplicates, throttledFrames });
    } else if (command.cmd === 'close') {
      for (const socket of sockets) socket?.terminate();
      process.exit(0);
    }
  });
  process.send!({ cmd: 'ready' });
}

async function startClients(): Promise<ClientProcess> {
  // Vitest compiles with esbuild's keepNames, whose `__name` helper the function's source calls.
  const source = `const __name = (target) => target; (${clientMain.toString()})()`;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const replies: Array<{ cmd: string; resolve: (message: unknown) => void }> = [];
  child.on('message', (message: { cmd: string }) => {
    const index = replies.findIndex((reply) => reply.cmd === message.cmd);
    if (index >= 0) replies.splice(index, 1)[0]!.resolve(message);
  });
  const request = <T>(command: object | undefined, reply: string) =>
    new Promise<T>((resolve) => {
      replies.push({ cmd: reply, resolve: resolve as (message: unknown) => void });
      if (command) child.send(command);
    });
  await request(undefined, 'ready');
  return { request, close: () => child.connected && child.send({ cmd: 'close' }) };
}

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
  clients = await startClients();
});
afterAll(async () => {
  clients?.close();
  await writes?.end();
  await stack?.stop();
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
    const boundMs = 2 * broadcastMs + config().FANOUT_MIN_INTERVAL_MS + 3_000;
    const report = async () => clients.request<Report>({ cmd: 'report', final }, 'report');
    let outcome = await report();
    for (const deadline = quietAt + boundMs + 10_000; outcome.behind > 0 && wallMs() < deadline; outcome = await report()) await sleep(500);

    const throttled = statuses.filter((status) => status === 429).length;
    const latencies = fulfilments.map(({ requestId, committedAt }) => (wallet.arrivals.get(requestId) ?? Infinity) - committedAt);
    const posts = [...stack.quota.perSecond('management').entries()].filter(([second]) => second * 1000 >= started && second * 1000 < until);
    const { behind, lastArrival, duplicates } = outcome;
    console.log(
      JSON.stringify({
        requests: statuses.length,
        throttled,
        forgeLatenciesMs: latencies.map(Math.round),
        postsPerSecondMax: Math.max(...posts.map(([, count]) => count)),
        behind,
        finalAfterQuietMs: Math.round(lastArrival - quietAt),
        boundMs: Math.round(boundMs),
        duplicates,
        throttledFrames: outcome.throttledFrames,
        quota: stack.quota.stats(),
        listener: stack.listener!.stats(),
      }),
    );
    wallet.close();

    expect(statuses.length).toBeGreaterThanOrEqual(2_900);
    expect(throttled / statuses.length).toBeLessThan(0.01);
    expect(fulfilments).toHaveLength(6);
    for (const latency of latencies) expect(latency).toBeLessThan(2_000);
    // Whole seconds inside the run: the listener's posts and every shard's together, within the budget (10% for the seconds' edges).
    expect(posts.length).toBeGreaterThanOrEqual(runMs / 1000 - 1);
    for (const [, count] of posts) expect(count).toBeLessThanOrEqual(budget * 1.1);
    expect(behind).toBe(0);
    expect(lastArrival - quietAt).toBeLessThan(boundMs);
    expect(duplicates).toBe(0);
  }, 240_000);
});
