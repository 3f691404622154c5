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
  /** `Subscribe` answers the last `sequence` of the wallet's forgeFulfilled stream (docs/realtime.md); from a hub that answers nothing, a stream has no start. */
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
  /**
   * Joins the address's group (and again after each reconnect, since a new connection has none) and starts its
   * forgeFulfilled stream: resolves once the hub has answered where the stream stands and the wallet's fulfilled
   * forge requests so far have been read. Every fulfilment committed after it resolves is raised exactly once: from
   * its event or, when that was lost, from the read the next event's gap or a reconnect makes. Those the first read
   * found are not, unless the hub's event numbers them after the start. A first subscribe() that fails (the hub, or
   * that read) rejects and leaves the address unsubscribed. While the connection is reconnecting it resolves at
   * once, and the stream starts with the restore (`onRestored`).
   */
  subscribe(address: string): Promise<void>;
  unsubscribe(address: string): Promise<void>;
  /** Called once changes have stopped for `debounceMs` (300 ms unless set), with the newest payload by version; returns the way to stop. */
  onMarketChanged(listener: (event: MarketChangedEvent) => void, options?: { debounceMs?: number }): () => void;
  /** Each fulfilment of a subscribed wallet once, whether the hub's event reached this client or a catch-up found it. */
  onForgeFulfilled(listener: (event: ForgeFulfilledEvent) => void): () => void;
  /** After a reconnect, once the subscriptions are restored (or failed to be: the error). */
  onRestored(listener: (error?: unknown) => void): () => void;
  /** After a read failed: a catch-up, or the first read of a stream that starts with a restore (the wallet's next event or a reconnect reads again). */
  onCatchUpFailed(listener: (error: unknown) => void): () => void;
  /** The event, else after `timeoutMs` the forge-requests endpoint, else the caller's `pollChain`; subscribes to the address. */
  waitForForgeFulfilled(address: string, requestId: string, options?: ForgeWaitOptions): Promise<ForgeResult>;
  close(): Promise<void>;
}

const connected = 'Connected';

/** What the client knows of one wallet's forgeFulfilled stream. */
interface ForgeStream {
  /**
   * The sequence the hub answered to the Subscribe that started the stream: its events above it are the stream's.
   * Undefined until then, and from a hub that answers none.
   */
  start?: number;
  /** What the first read after that answer found fulfilled: history, never raised. Undefined until that read succeeds. */
  history?: Map<string, ForgeFulfilledEvent>;
  /** Requests raised, each once. */
  raised: Map<string, ForgeFulfilledEvent>;
  /** The hub's events that came before `history`: taken in order once it is read. */
  early: ForgeFulfilled[];
  /** A Subscribe or first read for the stream is under way; when neither is and `history` is missing, the next event reads. */
  starting: boolean;
  /** The last sequence up to which nothing was missed; undefined after a gap no read has started to cover. */
  sequence?: number;
  /** Reads run one after the other: the stream's first, then each catch-up. */
  reads: Promise<void>;
  /** The subscribe() that starts the stream: Subscribe's answer, then the first read. */
  started?: Promise<void>;
}

/**
 * Events over any hub connection: the realtime behaviour docs/realtime.md
 * describes, apart from the transport. The hub sends each event at most once
 * and numbers every stream, and its Subscribe answers where a wallet's stream
 * stands, so a client knows where its stream starts and what it missed: a
 * jump in a wallet's `sequence` or a reconnect makes it read the wallet's
 * fulfilled forge requests again and raise those neither raised nor history;
 * a reconnect reads the listings again.
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
    stream.raised.set(event.requestId, event);
    for (const listener of forgeListeners) listener(event);
  };
  const failed = (error: unknown) => catchUpFailures.forEach((listener) => listener(error));

  /** The hub's sequence from Subscribe's answer; anything else is a hub that answers none. */
  const sequenceOf = (answer: unknown) => (typeof answer === 'number' && Number.isSafeInteger(answer) && answer >= 0 ? answer : undefined);

  /**
   * One of the hub's events on a stream whose history is read: raised unless it was raised already or is history
   * numbered at or below the stream's start (at any number, from a hub that answers none); a gap makes it read.
   */
  const receive = (address: string, stream: ForgeStream, event: ForgeFulfilled) => {
    const afterStart = stream.start !== undefined && event.sequence > stream.start;
    if (!stream.raised.has(event.requestId) && (afterStart || !stream.history?.has(event.requestId))) raise(stream, event);
    // At or below what is covered: no gap, and nothing to move back.
    if (stream.sequence !== undefined && event.sequence <= stream.sequence) return;
    const gap = stream.sequence === undefined || event.sequence !== stream.sequence + 1;
    stream.sequence = event.sequence;
    if (gap) void read(address, stream).catch(failedRead(stream));
  };

  /**
   * Reads the wallet's fulfilled forge requests. The stream's first read makes its history and then takes the
   * events that came meanwhile; a later one raises each request neither raised nor history. Reads run one after
   * the other, so each begins after whatever made it necessary.
   */
  const read = (address: string, stream: ForgeStream): Promise<void> => {
    const done = stream.reads.then(async () => {
      const fulfilled = new Map<string, ForgeFulfilledEvent>();
      for await (const request of client.walk('listAccountForgeRequests', { address, filter: (f) => f.status.eq('Fulfilled') })) {
        fulfilled.set(request.requestId, {
          requestId: request.requestId,
          tokenId: request.tokenId,
          editionId: request.editionId,
          buyer: address,
          caughtUp: true,
        });
      }
      if (!stream.history) {
        stream.history = fulfilled;
        stream.starting = false;
        for (const event of stream.early.splice(0)) receive(address, stream, event);
        return;
      }
      for (const [requestId, event] of fulfilled) if (!stream.raised.has(requestId) && !stream.history.has(requestId)) raise(stream, event);
    });
    stream.reads = done.catch(() => undefined);
    return done;
  };
  /** A read that failed leaves the stream as if it had a gap, so the wallet's next event reads again. */
  const failedRead = (stream: ForgeStream) => (error: unknown) => {
    stream.sequence = undefined;
    stream.starting = false;
    failed(error);
  };

  /**
   * Where the stream stands after a Subscribe's answer: the first answer is its start; nothing up to the answer
   * is missing, since the read that follows covers it.
   */
  const answered = (stream: ForgeStream, answer: unknown) => {
    const sequence = sequenceOf(answer);
    if (sequence === undefined) return;
    if (!stream.history && stream.start === undefined) stream.start = sequence;
    stream.sequence = Math.max(stream.sequence ?? sequence, sequence);
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
    if (stream.history) return receive(event.buyer, stream, event);
    stream.early.push(event);
    // A first read that failed is made again; until one succeeds, nothing is raised.
    if (!stream.starting) {
      stream.starting = true;
      void read(event.buyer, stream).catch(failedRead(stream));
    }
  }) as (payload: never) => void);

  connection.on('marketChanged', ((event: MarketChanged) => {
    // Ordered by version, never by maxBlock, which a chain reorg lowers; an older event that arrives late is dropped.
    if (newestMarket && event.version <= newestMarket.version) return;
    newestMarket = event;
    for (const listener of marketListeners) listener(event);
  }) as (payload: never) => void);

  connection.onreconnected(() => {
    // A new connection missed whatever was sent while there was none: each stream reads once its Subscribe has answered.
    for (const stream of streams.values()) {
      stream.sequence = undefined;
      if (!stream.history) stream.starting = true;
    }
    const restore = async ([address, stream]: [string, ForgeStream]) => {
      let answer: unknown;
      try {
        answer = await connection.invoke('Subscribe', address);
      } catch (error) {
        stream.starting = false;
        throw error;
      }
      answered(stream, answer);
      void read(address, stream).catch(failedRead(stream));
    };
    void Promise.all([...streams].map(restore)).then(
      () => restoredListeners.forEach((listener) => listener()),
      (error: unknown) => restoredListeners.forEach((listener) => listener(error)),
    );
    void catchUpMarket();
  });

  const events: Events = {
    connection,
    subscriptions,
    async subscribe(address) {
      const group = address.toLowerCase();
      subscriptions.add(group);
      const existing = streams.get(group);
      if (existing) {
        if (connection.state === connected) await connection.invoke('Subscribe', group);
        return existing.started;
      }
      const stream: ForgeStream = { raised: new Map(), early: [], starting: false, reads: Promise.resolve() };
      streams.set(group, stream);
      // While reconnecting, the restore after it does the work.
      if (connection.state !== connected) return;
      stream.starting = true;
      stream.started = (async () => {
        try {
          answered(stream, await connection.invoke('Subscribe', group));
          await read(group, stream);
        } catch (error) {
          subscriptions.delete(group);
          streams.delete(group);
          // The hub may have joined the group before the failure; a connection that is gone has left it anyway.
          if (connection.state === connected) await connection.invoke('Unsubscribe', group).catch(() => undefined);
          throw error;
        }
      })();
      return stream.started;
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
        // Fulfilled before the stream's first read (history, for which no event is raised), or raised before this wait.
        const stream = streams.get(address.toLowerCase());
        const already = stream?.history?.get(requestId) ?? stream?.raised.get(requestId);
        if (already) return { requestId, tokenId: already.tokenId, editionId: already.editionId, source: already.caughtUp ? 'api' : 'event' };
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
