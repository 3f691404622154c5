import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../../packages/client/src/index';
import { eventsOver, ForgeTimeoutError, type HubLike } from '../../../packages/client/src/events';
import { gate } from '../../support/gate';

/**
 * A hub connection in memory: the test plays the server. `Subscribe` answers `sequence`, the wallet's last
 * forgeFulfilled number (undefined: a hub that answers none).
 */
function fakeHub() {
  const handlers = new Map<string, Set<(payload: never) => void>>();
  const reconnected: Array<() => void> = [];
  const invocations: string[] = [];
  const hub: HubLike & {
    emit(event: string, payload: unknown): void;
    reconnect(): void;
    invocations: string[];
    state: string;
    sequence: number | undefined;
  } = {
    state: 'Connected',
    invocations,
    sequence: 0,
    on: (event, handler) => void (handlers.get(event) ?? handlers.set(event, new Set()).get(event)!).add(handler),
    off: (event, handler) => void handlers.get(event)?.delete(handler),
    invoke: async (method, address) => {
      invocations.push(`${method} ${address}`);
      return method === 'Subscribe' ? hub.sequence : undefined;
    },
    onreconnected: (callback) => void reconnected.push(callback),
    stop: async () => undefined,
    emit: (event, payload) => handlers.get(event)?.forEach((handler) => handler(payload as never)),
    reconnect: () => reconnected.forEach((callback) => callback()),
  };
  return hub;
}

const buyer = `0x${'B'.repeat(40)}`;

/**
 * A client whose forge-requests endpoint answers `items` to a read of one request, and `fulfilled` (none unless
 * set; it may wait, or fail the read) to a read of the wallet's fulfilled ones, counting the reads.
 */
function clientAnswering(items: object[], fulfilled: () => object[] | Promise<object[]> = () => []) {
  const reads: string[] = [];
  const fetch = (async (input: string | URL | Request) => {
    const url = String(input);
    reads.push(url);
    const answer = url.includes('status%3DFulfilled') ? await fulfilled() : url.includes('/marketplace/listings') ? [] : items;
    const totalCount = url.includes('/marketplace/listings') ? 17 : answer.length;
    return new Response(JSON.stringify({ items: answer, totalCount, page: 1, pageSize: 100 }));
  }) as typeof globalThis.fetch;
  return { client: createClient({ baseUrl: 'http://api.test', fetch }), reads };
}

/** A forgeFulfilled as the hub sends it. */
const fulfilled = (requestId: string, sequence: number, tokenId = '7', editionId = '3') => ({
  requestId,
  tokenId,
  editionId,
  buyer: buyer.toLowerCase(),
  sequence,
});
/** A fulfilled forge request as the endpoint answers it. */
const fulfilledRequest = (requestId: string, tokenId = '7', editionId = '3') => ({
  requestId,
  tier: 1,
  status: 'Fulfilled',
  tokenId,
  editionId,
  blockNumber: '9',
});
const oneRequestReads = (reads: string[]) => reads.filter((url) => url.includes('requestId%3D'));
const fulfilledReads = (reads: string[]) => reads.filter((url) => url.includes('status%3DFulfilled'));
const requestIds = (events: unknown[]) => events.map((event) => (event as { requestId: string }).requestId);

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

describe('where a stream starts', () => {
  const lower = buyer.toLowerCase();

  it('raises once a fulfilment committed while the first read was held, though that read found it', async () => {
    const hub = fakeHub();
    hub.sequence = 3;
    const firstRead = gate();
    let onEndpoint = [fulfilledRequest('1')];
    const { client } = clientAnswering([], async () => (await firstRead.pass(), onEndpoint));
    const events = eventsOver(hub, client);
    const raised: unknown[] = [];
    events.onForgeFulfilled((event) => raised.push(event));
    const subscribed = events.subscribe(buyer);
    await firstRead.reached;
    // Request 5 is fulfilled while the read is held: the read finds it, and the hub numbers its event 4, after the 3 Subscribe answered.
    onEndpoint = [fulfilledRequest('1'), fulfilledRequest('5')];
    firstRead.open();
    await subscribed;
    await vi.advanceTimersByTimeAsync(0);
    hub.emit('forgeFulfilled', fulfilled('5', 4));
    await vi.advanceTimersByTimeAsync(0);
    expect(raised).toEqual([fulfilled('5', 4)]);
    // Event 5 never came; the read after the gap raises 7 alone: 5 was raised, 1 is history.
    onEndpoint = ['1', '5', '7', '8'].map((id) => fulfilledRequest(id));
    hub.emit('forgeFulfilled', fulfilled('8', 6));
    await vi.advanceTimersByTimeAsync(0);
    expect(requestIds(raised)).toEqual(['5', '8', '7']);
    expect(raised[2]).toEqual({ requestId: '7', tokenId: '7', editionId: '3', buyer: lower, caughtUp: true });
  });

  it('resolves subscribe() only once the first read is in, and takes the events that came meanwhile after it', async () => {
    const hub = fakeHub();
    hub.sequence = 3;
    const firstRead = gate();
    const { client, reads } = clientAnswering([], async () => (await firstRead.pass(), [fulfilledRequest('1'), fulfilledRequest('5')]));
    const events = eventsOver(hub, client);
    const raised: unknown[] = [];
    events.onForgeFulfilled((event) => raised.push(event));
    const subscribed = events.subscribe(buyer).then(() => 'resolved');
    await firstRead.reached;
    // 4 is numbered after the start; 3 at it, for a request the read finds fulfilled: history.
    hub.emit('forgeFulfilled', fulfilled('5', 4));
    hub.emit('forgeFulfilled', fulfilled('1', 3));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(raised).toEqual([]);
    expect(await Promise.race([subscribed, Promise.resolve('pending')])).toBe('pending');
    firstRead.open();
    expect(await subscribed).toBe('resolved');
    expect(raised).toEqual([fulfilled('5', 4)]);
    // 4 follows the start, 3 is at it: no gap, so no read after the first.
    await vi.advanceTimersByTimeAsync(0);
    expect(fulfilledReads(reads)).toHaveLength(1);
  });

  it('rejects, leaving nothing subscribed, when the first read fails', async () => {
    const hub = fakeHub();
    const { client } = clientAnswering([], () => {
      throw new Error('the endpoint is down');
    });
    const events = eventsOver(hub, client);
    const raised: unknown[] = [];
    events.onForgeFulfilled((event) => raised.push(event));
    await expect(events.subscribe(buyer)).rejects.toThrow('the endpoint is down');
    expect(events.subscriptions).toEqual(new Set());
    expect(hub.invocations).toEqual([`Subscribe ${lower}`, `Unsubscribe ${lower}`]);
    hub.emit('forgeFulfilled', fulfilled('1', 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(raised).toEqual([]);
  });

  it('starts the stream of a wallet subscribed while reconnecting with the restore’s answer', async () => {
    const hub = fakeHub();
    hub.state = 'Reconnecting';
    const { client } = clientAnswering([], () => [fulfilledRequest('9')]);
    const events = eventsOver(hub, client);
    const raised: unknown[] = [];
    events.onForgeFulfilled((event) => raised.push(event));
    await events.subscribe(buyer);
    hub.state = 'Connected';
    hub.sequence = 2;
    hub.reconnect();
    await vi.advanceTimersByTimeAsync(0);
    hub.emit('forgeFulfilled', fulfilled('9', 2));
    hub.emit('forgeFulfilled', fulfilled('10', 3));
    await vi.advanceTimersByTimeAsync(0);
    expect(requestIds(raised)).toEqual(['10']);
  });

  it('takes a hub that answers no sequence at its events’ word: what the first read found is history, the rest is raised', async () => {
    const hub = fakeHub();
    hub.sequence = undefined;
    const { client } = clientAnswering([], () => [fulfilledRequest('9')]);
    const events = eventsOver(hub, client);
    const raised: unknown[] = [];
    events.onForgeFulfilled((event) => raised.push(event));
    await events.subscribe(buyer);
    hub.emit('forgeFulfilled', fulfilled('9', 5));
    hub.emit('forgeFulfilled', fulfilled('10', 6));
    await vi.advanceTimersByTimeAsync(0);
    expect(requestIds(raised)).toEqual(['10']);
  });
});

describe('waitForForgeFulfilled', () => {
  it('resolves from the event, without reading the endpoint', async () => {
    const hub = fakeHub();
    const { client, reads } = clientAnswering([]);
    const waiting = eventsOver(hub, client).waitForForgeFulfilled(buyer, '42');
    await vi.advanceTimersByTimeAsync(10_000);
    hub.emit('forgeFulfilled', fulfilled('41', 1, '1', '1'));
    hub.emit('forgeFulfilled', fulfilled('42', 2));
    await expect(waiting).resolves.toEqual({ requestId: '42', tokenId: '7', editionId: '3', source: 'event' });
    expect(hub.invocations).toEqual([`Subscribe ${buyer.toLowerCase()}`]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(oneRequestReads(reads)).toEqual([]);
  });

  it('reads the forge-requests endpoint after 45 s without the event', async () => {
    const hub = fakeHub();
    const { client, reads } = clientAnswering([{ requestId: '42', tier: 1, status: 'Fulfilled', tokenId: '7', editionId: '3', blockNumber: '9' }]);
    const waiting = eventsOver(hub, client).waitForForgeFulfilled(buyer, '42');
    await vi.advanceTimersByTimeAsync(44_999);
    expect(oneRequestReads(reads)).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await expect(waiting).resolves.toEqual({ requestId: '42', tokenId: '7', editionId: '3', source: 'api' });
    expect(oneRequestReads(reads)).toEqual([`http://api.test/accounts/${buyer}/forge-requests?filter=requestId%3D42&pageSize=1`]);
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

describe('catching up after a missed event', () => {
  it('raises each fulfilment once, whether the event came or a gap in the sequence made it read the wallet again', async () => {
    const hub = fakeHub();
    let onEndpoint: object[] = [];
    const { client } = clientAnswering([], () => onEndpoint);
    const events = eventsOver(hub, client);
    const raised: unknown[] = [];
    events.onForgeFulfilled((event) => raised.push(event));
    await events.subscribe(buyer);
    await vi.advanceTimersByTimeAsync(0);
    onEndpoint = [fulfilledRequest('1')];
    hub.emit('forgeFulfilled', fulfilled('1', 1));
    await vi.advanceTimersByTimeAsync(0);
    // Events 2 and 3 never came; 4 did, and the read after the gap finds 2 and 3.
    onEndpoint = ['1', '2', '3', '4'].map((id) => fulfilledRequest(id));
    hub.emit('forgeFulfilled', fulfilled('4', 4));
    await vi.advanceTimersByTimeAsync(0);
    hub.emit('forgeFulfilled', fulfilled('4', 4));
    await vi.advanceTimersByTimeAsync(0);
    expect(raised.map((event) => (event as { requestId: string }).requestId).sort()).toEqual(['1', '2', '3', '4']);
    expect(raised).toContainEqual({ requestId: '2', tokenId: '7', editionId: '3', buyer: buyer.toLowerCase(), caughtUp: true });
  });

  it('does not raise what was fulfilled before the wallet was subscribed', async () => {
    const hub = fakeHub();
    const { client } = clientAnswering([], () => [fulfilledRequest('9')]);
    const events = eventsOver(hub, client);
    const raised: unknown[] = [];
    events.onForgeFulfilled((event) => raised.push(event));
    await events.subscribe(buyer);
    await vi.advanceTimersByTimeAsync(0);
    hub.emit('forgeFulfilled', fulfilled('10', 5));
    await vi.advanceTimersByTimeAsync(0);
    expect(raised.map((event) => (event as { requestId: string }).requestId)).toEqual(['10']);
  });

  it('reads the wallet and the listings again after a reconnect, and raises what was fulfilled meanwhile', async () => {
    const hub = fakeHub();
    let onEndpoint: object[] = [];
    const { client } = clientAnswering([], () => onEndpoint);
    const events = eventsOver(hub, client);
    const raised: unknown[] = [];
    const market: unknown[] = [];
    events.onForgeFulfilled((event) => raised.push(event));
    events.onMarketChanged((event) => market.push(event), { debounceMs: 0 });
    await events.subscribe(buyer);
    hub.emit('marketChanged', { count: 3, maxBlock: '30', version: 5 });
    await vi.advanceTimersByTimeAsync(0);
    onEndpoint = [fulfilledRequest('20')];
    hub.reconnect();
    await vi.advanceTimersByTimeAsync(0);
    expect(raised).toEqual([{ requestId: '20', tokenId: '7', editionId: '3', buyer: buyer.toLowerCase(), caughtUp: true }]);
    expect(market).toEqual([
      { count: 3, maxBlock: '30', version: 5 },
      { count: 17, maxBlock: '30', version: 5, caughtUp: true },
    ]);
    // The hub's own event for it, arriving late, is not raised again.
    hub.emit('forgeFulfilled', fulfilled('20', 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(raised).toHaveLength(1);
  });
});
