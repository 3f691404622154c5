import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { demoSizes } from '@hatchery/local/demo-data';
import { functionShards } from '@hatchery/listener/shards';
import { shardOf } from '@hatchery/core/realtime/connections';
import { isHandshakeAnswer, managementProxy, type ManagementProxy } from '../../support/management-proxy';
import { startTestStack, type TestStack } from '../../support/stack';
import { indexer, waitFor } from './support';

/**
 * A broadcast whose shard invocations Lambda times out mid-shard and the
 * listener retries, behind an outside throttle in front of the management
 * API: the real fan-out function in the local Lambda service's worker
 * threads, whose timeout ends the invocation whatever it is doing, and real
 * WebSocket clients counting every frame they receive.
 */

const RS = '\u001e';
const timedOut = 'timed-out-fanout';
/** The runner's timeout: the handler is told 30 s more (./shard-timeout-handler.ts). */
const runnerTimeoutMs = 2_500;
/** The outside throttle: posts a second the proxy lets through (in windows of a second), 429 beyond. */
const allowedPerSecond = 10;
/** Clients of the hub; the four shards invoked are the four that hold the most of them, a quarter at least. */
const clients = 300;
const invokedShards = 4;

let stack: TestStack;
let writes: ReturnType<typeof indexer>;
let proxy: ManagementProxy;
let refused = 0;
/** Off once the tests are over: the listener's broadcast still in flight then ends at once rather than at 10 posts a second. */
let throttling = true;
const sockets: WebSocket[] = [];
/** Every marketChanged frame each client received, by its version. */
const received: Array<Map<number, number>> = [];

/**
 * The stack's management API allowing `allowedPerSecond` posts a second (429 with Retry-After beyond). Handshake
 * answers pass, uncounted: the test is about an event's posts, and 300 handshakes at 10 a second took 30 s.
 */
function throttlingProxy(): Promise<ManagementProxy> {
  let windowStart = 0;
  let inWindow = 0;
  return managementProxy(
    () => stack.url,
    (call) => {
      if (!throttling || call.method !== 'POST' || isHandshakeAnswer(call)) return 'forward';
      const now = performance.now();
      if (now - windowStart >= 1_000) {
        windowStart = now;
        inWindow = 0;
      }
      if (++inWindow <= allowedPerSecond) return 'forward';
      refused++;
      return { status: 429, type: 'LimitExceededException', headers: { 'retry-after': '1' } };
    },
  );
}

/** A raw WebSocket client of the hub: the handshake, then every marketChanged counted by version. */
async function client(): Promise<void> {
  const counts = new Map<number, number>();
  const socket = new WebSocket(`${stack.url.replace(/^http/, 'ws')}/hubs/events`);
  await once(socket, 'open');
  socket.send(`{"protocol":"json","version":1}${RS}`);
  await once(socket, 'message');
  socket.on('message', (data) => {
    for (const record of data.toString().split(RS).filter(Boolean)) {
      const message = JSON.parse(record) as { target?: string; arguments?: Array<{ version: number }> };
      if (message.target === 'marketChanged') counts.set(message.arguments![0]!.version, (counts.get(message.arguments![0]!.version) ?? 0) + 1);
    }
  });
  sockets.push(socket);
  received.push(counts);
}

beforeAll(async () => {
  proxy = await throttlingProxy();
  stack = await startTestStack({
    demoData: demoSizes.demo,
    managementEndpoint: proxy.url,
    functions: { [timedOut]: { handler: 'test/stack/realtime/shard-timeout-handler.handler', timeoutMs: runnerTimeoutMs, retries: 0 } },
    // Every shard goes to the timed-out function, at a pace the outside throttle cannot carry.
    listener: { smallAudience: 0, budget: { postsPerSecond: 16 * 100, minIntervalMs: 0 } },
  });
  writes = indexer(stack);
}, 120_000);

afterAll(async () => {
  throttling = false;
  for (const socket of sockets) socket.terminate();
  await writes?.end();
  await stack?.stop();
  proxy?.close();
});

describe('a shard that Lambda times out', () => {
  it('is retried without anyone getting the frame twice: the retry resumes after what the cut-off invocation claimed', async () => {
    // Twenty at a time rather than one after another, each waiting for its $connect and its handshake's answer.
    for (let i = 0; i < clients; i += 20) await Promise.all(Array.from({ length: Math.min(20, clients - i) }, client));
    expect(stack.hub.connections.size).toBe(clients);
    // Some invocation is always cut off, whatever ids the clients got. The four shards invoked hold the most
    // connections, a quarter of the clients (75) at least, and an invocation that is not cut off ends only once each of
    // its connections had a post through the throttle. Four first invocations, none cut off, `workers.size` at a time,
    // would all end within `rounds` runner timeouts (5 s with two threads) and a little: at most seven of the
    // throttle's one-second windows touch such a span, which let 70 posts through.
    const held = new Map<number, number>();
    for (const id of stack.hub.connections.keys()) held.set(shardOf(id), (held.get(shardOf(id)) ?? 0) + 1);
    const largest = [...held].sort(([, a], [, b]) => b - a).slice(0, invokedShards);
    const rounds = Math.ceil(invokedShards / stack.workers.size);
    expect(
      largest.reduce((sum, [, count]) => sum + count, 0),
      'connections in the invoked shards',
    ).toBeGreaterThan(allowedPerSecond * (Math.ceil((rounds * runnerTimeoutMs) / 1_000) + 2));
    const attemptsBefore = stack.lambda.stats();
    // The stack's own listener hands its shards to the stack's fan-out function; this invoker is the listener's, pointed at the runner that times out.
    const invoke = functionShards(timedOut, stack.url);
    const frame = (version: number) => `{"type":1,"target":"marketChanged","arguments":[{"count":1,"maxBlock":"1","version":${version}}]}${RS}`;
    const version = 1_000_001;
    const outcomes = await Promise.all(
      // Four shards: enough to keep both worker threads busy with invocations that time out.
      largest.map(([shard]) =>
        invoke({ event: `marketChanged#${version}`, shard, frame: frame(version), postsPerSecond: 100 }).then(
          (delivery) => ({ delivery }),
          (error: unknown) => ({ error }),
        ),
      ),
    );
    const stats = stack.lambda.stats();
    expect(stats.failedAttempts - attemptsBefore.failedAttempts, 'invocations timed out').toBeGreaterThan(0);
    expect(refused, 'the outside throttle refused posts').toBeGreaterThan(0);
    // Then a last frame to each client, past the throttle: a connection's frames come in order, so once every client
    // has it, every frame the stack sent before it is in the count.
    const last = 2_000_000;
    const ids = [...stack.hub.connections.keys()];
    for (let i = 0; i < ids.length; i += 20) {
      await Promise.all(
        ids.slice(i, i + 20).map(async (id) => {
          const posted = await fetch(`${stack.url}/@connections/${encodeURIComponent(id)}`, { method: 'POST', body: frame(last) });
          expect(posted.status).toBe(200);
        }),
      );
    }
    await waitFor(() => received.every((counts) => counts.has(last)), 'the last frame at every client', 60_000);
    const twice = received.filter((counts) => (counts.get(version) ?? 0) > 1).length;
    expect(twice, 'clients that got the frame twice').toBe(0);
    const reached = received.filter((counts) => counts.get(version) === 1).length;
    expect(reached, 'clients the retries reached').toBeGreaterThan(0);
    expect(outcomes.length).toBe(invokedShards);
  }, 180_000);

  it('and the listener’s own broadcasts through it reach every client at most once', async () => {
    await writes.listToken();
    const listeners = () => received.filter((counts) => [...counts.keys()].some((version) => version < 1_000_000)).length;
    await waitFor(() => listeners() > 0, 'a marketChanged of the listener', 60_000);
    // Two of the throttle's seconds' worth of clients more, each a chance for a frame to come twice.
    const reachedFirst = listeners();
    await waitFor(() => listeners() >= Math.min(received.length, reachedFirst + 2 * allowedPerSecond), 'the broadcast to reach more clients', 60_000);
    for (const counts of received) for (const count of counts.values()) expect(count).toBe(1);
  }, 120_000);
});
