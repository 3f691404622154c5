import { HubConnectionBuilder, LogLevel, type IHttpConnectionOptions } from '@microsoft/signalr';
import { createClient, type Client } from './client.js';
import type { ForgeFulfilled, HubEventName as EventName, HubPath, MarketChanged } from './route-types.js';
import { debounce } from './timing.js';

export type { ForgeFulfilled, MarketChanged };

const hubPath: HubPath = '/hubs/events';

/** The part of @microsoft/signalr's HubConnection used here. */
export interface HubLike {
  on(event: EventName, handler: (payload: never) => void): void;
  off(event: EventName, handler: (payload: never) => void): void;
  invoke(method: 'Subscribe' | 'Unsubscribe', address: string): Promise<unknown>;
  onreconnected(callback: () => void): void;
  readonly state: string;
  stop(): Promise<void>;
}

export interface ForgeResult {
  requestId: string;
  tokenId?: string;
  editionId?: string;
  /** What told: the hub's event, the forge-requests endpoint, or the caller's on-chain poll. */
  source: 'event' | 'api' | 'chain';
}

export interface ForgeWaitOptions {
  /** How long the event is waited for before the fallbacks (default forgeEventWaitMs, 45 s; docs/realtime.md). */
  timeoutMs?: number;
  /** The last step, after the endpoint: the caller's own read of the chain; undefined means not fulfilled. */
  pollChain?: (request: { address: string; requestId: string }) => Promise<{ tokenId: string; editionId: string } | undefined>;
}

/**
 * How long waitForForgeFulfilled waits for the hub's event before it reads the forge requests: the listener stops
 * trying a forgeFulfilled post no later, so an event that has not come by then is not coming.
 */
export const forgeEventWaitMs = 45_000;

export class ForgeTimeoutError extends Error {
  constructor(
    readonly address: string,
    readonly requestId: string,
  ) {
    super(`Forge request ${requestId} of ${address} is not fulfilled yet`);
    this.name = 'ForgeTimeoutError';
  }
}

/**
 * A forgeFulfilled as the client raises it: the hub's event, or one the
 * client found fulfilled when it caught up after a gap or a reconnect
 * (`caughtUp`, with no `sequence`).
 */
export type ForgeFulfilledEvent = Omit<ForgeFulfilled, 'sequence'> & { sequence?: number; caughtUp?: true };

/**
 * A marketChanged as the client raises it: the hub's event, or, after a
 * reconnect, the listings read again (`caughtUp`: `count` is the listings'
 * `totalCount`, `maxBlock` and `version` the newest the client had seen).
 */
export type MarketChangedEvent = MarketChanged & { caughtUp?: true };

export interface Events {
  readonly connection: HubLike;
  /** Lowercase addresses, restored on every reconnect. */
  readonly subscriptions: ReadonlySet<string>;
  /** Joins the address's group (and again after each reconnect, since a new connection has none), and reads its fulfilled forge requests so far. */
  subscribe(address: string): Promise<void>;
  unsubscribe(address: string): Promise<void>;
  /** Called once changes have stopped for `debounceMs` (300 ms unless set), with the newest payload by version; returns the way to stop. */
  onMarketChanged(listener: (event: MarketChangedEvent) => void, options?: { debounceMs?: number }): () => void;
  /** Each fulfilment of a subscribed wallet once, whether the hub's event reached this client or a catch-up found it. */
  onForgeFulfilled(listener: (event: ForgeFulfilledEvent) => void): () => void;
  /** After a reconnect, once the subscriptions are restored (or failed to be: the error). */
  onRestored(listener: (error?: unknown) => void): () => void;
  /** After a catch-up read failed (the wallet's next event, a gap or a reconnect reads again). */
  onCatchUpFailed(listener: (error: unknown) => void): () => void;
  /** The event, else after `timeoutMs` the forge-requests endpoint, else the caller's `pollChain`; subscribes to the address. */
  waitForForgeFulfilled(address: string, requestId: string, options?: ForgeWaitOptions): Promise<ForgeResult>;
  close(): Promise<void>;
}

const connected = 'Connected';

/** What the client knows of one wallet's forgeFulfilled stream. */
interface ForgeStream {
  /** Fulfilled requests already raised, or already fulfilled when the wallet was subscribed. */
  known: Map<string, ForgeFulfilledEvent>;
  /** The last sequence the hub sent this client; undefined until the first event after a (re)subscribe. */
  sequence?: number;
  /** Reads run one after the other: the subscription's first, then each catch-up. */
  reads: Promise<void>;
  /** The subscription's first read has not succeeded yet: the next read only records what is fulfilled. */
  unread: boolean;
}

/**
 * Events over any hub connection: the realtime behaviour docs/realtime.md
 * describes, apart from the transport. The hub sends each event at most once
 * and numbers every stream, so a client can tell what it missed: the first
 * forgeFulfilled after a (re)subscribe, a jump in a wallet's `sequence` or a
 * reconnect makes it read the wallet's fulfilled forge requests again and
 * raise those it has not raised; a reconnect reads the listings again.
 */
export function eventsOver(connection: HubLike, client: Client): Events {
  const subscriptions = new Set<string>();
  const streams = new Map<string, ForgeStream>();
  const restoredListeners = new Set<(error?: unknown) => void>();
  const catchUpFailures = new Set<(error: unknown) => void>();
  const forgeListeners = new Set<(event: ForgeFulfilledEvent) => void>();
  const marketListeners = new Set<(event: MarketChangedEvent) => void>();
  let newestMarket: MarketChanged | undefined;

  const raise = (stream: ForgeStream, event: ForgeFulfilledEvent) => {
    if (stream.known.has(event.requestId)) return;
    stream.known.set(event.requestId, event);
    for (const listener of forgeListeners) listener(event);
  };
  const failed = (error: unknown) => catchUpFailures.forEach((listener) => listener(error));

  /**
   * The wallet's fulfilled forge requests, each raised unless known; the
   * subscription's first read only records them. A read that fails leaves the
   * stream as if it had a gap, so the wallet's next event reads again.
   */
  const readFulfilled = (address: string, stream: ForgeStream) => {
    stream.reads = stream.reads.then(async () => {
      const baseline = stream.unread;
      try {
        for await (const request of client.walk('listAccountForgeRequests', { address, filter: (f) => f.status.eq('Fulfilled') })) {
          const event: ForgeFulfilledEvent = {
            requestId: request.requestId,
            tokenId: request.tokenId,
            editionId: request.editionId,
            buyer: address,
            caughtUp: true,
          };
          if (baseline) stream.known.set(request.requestId, event);
          else raise(stream, event);
        }
        stream.unread = false;
      } catch (error) {
        stream.sequence = undefined;
        failed(error);
      }
    });
    return stream.reads;
  };

  const catchUpMarket = async () => {
    try {
      const page = await client.api.listListings({ pageSize: 1 });
      const event: MarketChangedEvent = {
        count: page.totalCount,
        maxBlock: newestMarket?.maxBlock ?? '0',
        version: newestMarket?.version ?? 0,
        caughtUp: true,
      };
      for (const listener of marketListeners) listener(event);
    } catch (error) {
      failed(error);
    }
  };

  connection.on('forgeFulfilled', ((event: ForgeFulfilled) => {
    const stream = streams.get(event.buyer);
    if (!stream) return;
    raise(stream, event);
    const gap = stream.sequence === undefined || event.sequence !== stream.sequence + 1;
    stream.sequence = event.sequence;
    if (gap) void readFulfilled(event.buyer, stream);
  }) as (payload: never) => void);

  connection.on('marketChanged', ((event: MarketChanged) => {
    // Ordered by version, never by maxBlock, which a chain reorg lowers; an older event that arrives late is dropped.
    if (newestMarket && event.version <= newestMarket.version) return;
    newestMarket = event;
    for (const listener of marketListeners) listener(event);
  }) as (payload: never) => void);

  connection.onreconnected(() => {
    // A new connection missed whatever was sent while there was none: each stream starts again from a read.
    for (const stream of streams.values()) stream.sequence = undefined;
    void Promise.all([...subscriptions].map((address) => connection.invoke('Subscribe', address))).then(
      () => restoredListeners.forEach((listener) => listener()),
      (error: unknown) => restoredListeners.forEach((listener) => listener(error)),
    );
    for (const [address, stream] of streams) void readFulfilled(address, stream);
    void catchUpMarket();
  });

  const events: Events = {
    connection,
    subscriptions,
    async subscribe(address) {
      const group = address.toLowerCase();
      subscriptions.add(group);
      if (!streams.has(group)) {
        const stream: ForgeStream = { known: new Map(), reads: Promise.resolve(), unread: true };
        streams.set(group, stream);
        void readFulfilled(group, stream);
      }
      // While reconnecting, the restore after it does the work.
      if (connection.state === connected) {
        try {
          await connection.invoke('Subscribe', group);
        } catch (error) {
          subscriptions.delete(group);
          streams.delete(group);
          throw error;
        }
      }
    },
    async unsubscribe(address) {
      const group = address.toLowerCase();
      subscriptions.delete(group);
      streams.delete(group);
      if (connection.state === connected) await connection.invoke('Unsubscribe', group);
    },
    onMarketChanged(listener, options) {
      const debounced = debounce(listener, options?.debounceMs ?? 300);
      marketListeners.add(debounced);
      return () => (marketListeners.delete(debounced), debounced.cancel());
    },
    onForgeFulfilled(listener) {
      forgeListeners.add(listener);
      return () => forgeListeners.delete(listener);
    },
    onRestored(listener) {
      restoredListeners.add(listener);
      return () => restoredListeners.delete(listener);
    },
    onCatchUpFailed(listener) {
      catchUpFailures.add(listener);
      return () => catchUpFailures.delete(listener);
    },
    async waitForForgeFulfilled(address, requestId, options = {}) {
      let stop = () => {};
      const fromEvent = new Promise<ForgeResult>((resolve) => {
        stop = events.onForgeFulfilled((event) => {
          if (event.requestId === requestId)
            resolve({ requestId, tokenId: event.tokenId, editionId: event.editionId, source: event.caughtUp ? 'api' : 'event' });
        });
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await events.subscribe(address);
        // Fulfilled before the subscription's first read: the read knows it, and no event will be raised for it.
        const stream = streams.get(address.toLowerCase());
        await stream?.reads;
        const already = stream?.known.get(requestId);
        if (already) return { requestId, tokenId: already.tokenId, editionId: already.editionId, source: 'api' };
        const timedOut = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), options.timeoutMs ?? forgeEventWaitMs)));
        const early = await Promise.race([fromEvent, timedOut]);
        if (early) return early;
        return await Promise.race([fromEvent, fallback(client, address, requestId, options.pollChain)]);
      } finally {
        clearTimeout(timer);
        stop();
      }
    },
    close: () => connection.stop(),
  };
  return events;
}

async function fallback(client: Client, address: string, requestId: string, pollChain: ForgeWaitOptions['pollChain']): Promise<ForgeResult> {
  let failure: unknown;
  try {
    const page = await client.api.listAccountForgeRequests({ address, filter: (f) => f.requestId.eq(requestId), pageSize: 1 });
    const request = page.items.find((item) => item.requestId === requestId);
    if (request?.status === 'Fulfilled') return { requestId, tokenId: request.tokenId, editionId: request.editionId, source: 'api' };
  } catch (error) {
    // The chain may still answer; without it this error is the answer.
    failure = error;
  }
  const onChain = await pollChain?.({ address, requestId });
  if (onChain) return { requestId, ...onChain, source: 'chain' };
  throw failure ?? new ForgeTimeoutError(address, requestId);
}

export interface ConnectOptions {
  baseUrl: string;
  /** For the forge fallback; a client of `baseUrl` without a token otherwise. */
  client?: Client;
  /** Waits before each reconnect attempt; the last repeats forever, so the client never gives up. */
  reconnectDelaysMs?: readonly number[];
  logLevel?: LogLevel;
  /** Passed to @microsoft/signalr's withUrl (transport, skipNegotiation, headers…). */
  connection?: IHttpConnectionOptions;
  /** How often the client pings the hub (default eventsKeepAliveMs, 4 minutes). */
  keepAliveMs?: number;
  /** Silence from the hub after which the connection is dead and reconnects (default eventsServerTimeoutMs, 9 minutes; above twice keepAliveMs). */
  serverTimeoutMs?: number;
}

/**
 * How often the client pings, and how long it waits for the hub before it
 * calls the connection dead. API Gateway closes a connection after 10
 * minutes without a message (and after 2 hours in all, which the reconnect
 * covers), so a ping every 4 minutes keeps it open; each ping is a request
 * on the account's throttle and an invocation, so SignalR's default of 15 s
 * costs 16 times as much. The hub answers every ping, so its silence for more
 * than two keepalive periods (9 minutes) means it is gone.
 */
export const eventsKeepAliveMs = 4 * 60_000;
export const eventsServerTimeoutMs = 9 * 60_000;

/** Connects to the hub with @microsoft/signalr, reconnecting forever with the subscriptions restored. */
export async function connectEvents(options: ConnectOptions): Promise<Events> {
  const delays = options.reconnectDelaysMs ?? [0, 1_000, 2_000, 5_000, 10_000, 30_000];
  const connection = new HubConnectionBuilder()
    .withUrl(`${options.baseUrl.replace(/\/+$/, '')}${hubPath}`, options.connection ?? {})
    .withKeepAliveInterval(options.keepAliveMs ?? eventsKeepAliveMs)
    .withServerTimeout(options.serverTimeoutMs ?? eventsServerTimeoutMs)
    .withAutomaticReconnect({ nextRetryDelayInMilliseconds: ({ previousRetryCount }) => delays[Math.min(previousRetryCount, delays.length - 1)] ?? 30_000 })
    .configureLogging(options.logLevel ?? LogLevel.None)
    .build();
  const events = eventsOver(connection, options.client ?? createClient({ baseUrl: options.baseUrl }));
  await connection.start();
  return events;
}
