import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../../packages/client/src/index';
import { eventsOver, ForgeTimeoutError, type HubLike } from '../../../packages/client/src/events';

/** A hub connection in memory: the test plays the server. */
function fakeHub() {
  const handlers = new Map<string, Set<(payload: never) => void>>();
  const reconnected: Array<() => void> = [];
  const invocations: string[] = [];
  const hub: HubLike & { emit(event: string, payload: unknown): void; reconnect(): void; invocations: string[]; state: string } = {
    state: 'Connected',
    invocations,
    on: (event, handler) => void (handlers.get(event) ?? handlers.set(event, new Set()).get(event)!).add(handler),
    off: (event, handler) => void handlers.get(event)?.delete(handler),
    invoke: async (method, address) => void invocations.push(`${method} ${address}`),
    onreconnected: (callback) => void reconnected.push(callback),
    stop: async () => undefined,
    emit: (event, payload) => handlers.get(event)?.forEach((handler) => handler(payload as never)),
    reconnect: () => reconnected.forEach((callback) => callback()),
  };
  return hub;
}

const buyer = `0x${'B'.repeat(40)}`;

/** A client whose forge-requests endpoint answers `items`, counting the reads. */
function clientAnswering(items: object[]) {
  const reads: string[] = [];
  const fetch = (async (input: string | URL | Request) => {
    reads.push(String(input));
    return new Response(JSON.stringify({ items, totalCount: items.length, page: 1, pageSize: 1 }));
  }) as typeof globalThis.fetch;
  return { client: createClient({ baseUrl: 'http://api.test', fetch }), reads };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('onMarketChanged', () => {
  it('calls once, 300 ms after a burst ends, with the latest payload', async () => {
    const hub = fakeHub();
    const events = eventsOver(hub, clientAnswering([]).client);
    const calls: unknown[] = [];
    events.onMarketChanged((event) => calls.push(event));
    for (let count = 1; count <= 5; count++) {
      if (count > 1) await vi.advanceTimersByTimeAsync(200);
      hub.emit('marketChanged', { count, maxBlock: String(100 + count) });
    }
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(299);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([{ count: 5, maxBlock: '105' }]);
  });

  it('takes another delay, and stops on its own unsubscribe', async () => {
    const hub = fakeHub();
    const events = eventsOver(hub, clientAnswering([]).client);
    const calls: unknown[] = [];
    const stop = events.onMarketChanged((event) => calls.push(event), { debounceMs: 50 });
    hub.emit('marketChanged', { count: 1, maxBlock: '1' });
    await vi.advanceTimersByTimeAsync(50);
    expect(calls).toHaveLength(1);
    hub.emit('marketChanged', { count: 2, maxBlock: '2' });
    stop();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toHaveLength(1);
  });
});

describe('subscriptions', () => {
  it('restores every subscription after a reconnect', async () => {
    const hub = fakeHub();
    const events = eventsOver(hub, clientAnswering([]).client);
    await events.subscribe(buyer);
    await events.subscribe(`0x${'c'.repeat(40)}`);
    await events.unsubscribe(`0x${'c'.repeat(40)}`);
    const restored = new Promise<unknown>((resolve) => events.onRestored(resolve));
    hub.invocations.length = 0;
    hub.reconnect();
    expect(await restored).toBeUndefined();
    expect(hub.invocations).toEqual([`Subscribe ${buyer.toLowerCase()}`]);
  });

  it('only records a subscription while reconnecting; the restore sends it', async () => {
    const hub = fakeHub();
    hub.state = 'Reconnecting';
    const events = eventsOver(hub, clientAnswering([]).client);
    await events.subscribe(buyer);
    expect(hub.invocations).toEqual([]);
    hub.state = 'Connected';
    hub.reconnect();
    await vi.advanceTimersByTimeAsync(0);
    expect(hub.invocations).toEqual([`Subscribe ${buyer.toLowerCase()}`]);
  });
});

describe('waitForForgeFulfilled', () => {
  it('resolves from the event, without reading the endpoint', async () => {
    const hub = fakeHub();
    const { client, reads } = clientAnswering([]);
    const waiting = eventsOver(hub, client).waitForForgeFulfilled(buyer, '42');
    await vi.advanceTimersByTimeAsync(10_000);
    hub.emit('forgeFulfilled', { requestId: '41', tokenId: '1', editionId: '1' });
    hub.emit('forgeFulfilled', { requestId: '42', tokenId: '7', editionId: '3' });
    await expect(waiting).resolves.toEqual({ requestId: '42', tokenId: '7', editionId: '3', source: 'event' });
    expect(hub.invocations).toEqual([`Subscribe ${buyer.toLowerCase()}`]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(reads).toEqual([]);
  });

  it('reads the forge-requests endpoint after 45 s without the event', async () => {
    const hub = fakeHub();
    const { client, reads } = clientAnswering([{ requestId: '42', tier: 1, status: 'Fulfilled', tokenId: '7', editionId: '3', blockNumber: '9' }]);
    const waiting = eventsOver(hub, client).waitForForgeFulfilled(buyer, '42');
    await vi.advanceTimersByTimeAsync(44_999);
    expect(reads).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await expect(waiting).resolves.toEqual({ requestId: '42', tokenId: '7', editionId: '3', source: 'api' });
    expect(reads).toEqual([`http://api.test/accounts/${buyer}/forge-requests?filter=requestId%3D42&pageSize=1`]);
  });

  it("then asks the caller's on-chain poll, and fails only when that has nothing either", async () => {
    const hub = fakeHub();
    const { client } = clientAnswering([{ requestId: '42', tier: 1, status: 'Requested', blockNumber: '9' }]);
    const events = eventsOver(hub, client);
    const asked: unknown[] = [];
    const fromChain = events.waitForForgeFulfilled(buyer, '42', {
      timeoutMs: 1_000,
      pollChain: async (request) => (asked.push(request), { tokenId: '8', editionId: '2' }),
    });
    const nothing = events.waitForForgeFulfilled(buyer, '42', { timeoutMs: 1_000, pollChain: async () => undefined }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(fromChain).resolves.toEqual({ requestId: '42', tokenId: '8', editionId: '2', source: 'chain' });
    expect(asked).toEqual([{ address: buyer, requestId: '42' }]);
    const error = await nothing;
    expect(error).toBeInstanceOf(ForgeTimeoutError);
    expect(error).toMatchObject({ address: buyer, requestId: '42' });
  });
});
