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
  /** How long the event is waited for before the fallbacks (docs/realtime.md: 45 s). */
  timeoutMs?: number;
  /** The last step, after the endpoint: the caller's own read of the chain; undefined means not fulfilled. */
  pollChain?: (request: { address: string; requestId: string }) => Promise<{ tokenId: string; editionId: string } | undefined>;
}

export class ForgeTimeoutError extends Error {
  constructor(
    readonly address: string,
    readonly requestId: string,
  ) {
    super(`Forge request ${requestId} of ${address} is not fulfilled yet`);
    this.name = 'ForgeTimeoutError';
  }
}

export interface Events {
  readonly connection: HubLike;
  /** Lowercase addresses, restored on every reconnect. */
  readonly subscriptions: ReadonlySet<string>;
  /** Joins the address's group (and again after each reconnect, since a new connection has none). */
  subscribe(address: string): Promise<void>;
  unsubscribe(address: string): Promise<void>;
  /** Called once changes have stopped for `debounceMs` (300 ms unless set), with the newest payload by version; returns the way to stop. */
  onMarketChanged(listener: (event: MarketChanged) => void, options?: { debounceMs?: number }): () => void;
  onForgeFulfilled(listener: (event: ForgeFulfilled) => void): () => void;
  /** After a reconnect, once the subscriptions are restored (or failed to be: the error). */
  onRestored(listener: (error?: unknown) => void): () => void;
  /** The event, else after `timeoutMs` the forge-requests endpoint, else the caller's `pollChain`; subscribes to the address. */
  waitForForgeFulfilled(address: string, requestId: string, options?: ForgeWaitOptions): Promise<ForgeResult>;
  close(): Promise<void>;
}

const connected = 'Connected';

/** Events over any hub connection: the realtime behaviour docs/realtime.md describes, apart from the transport. */
export function eventsOver(connection: HubLike, client: Client): Events {
  const subscriptions = new Set<string>();
  const restoredListeners = new Set<(error?: unknown) => void>();
  const listen = <T>(event: EventName, handler: (payload: T) => void) => {
    connection.on(event, handler as (payload: never) => void);
    return () => connection.off(event, handler as (payload: never) => void);
  };

  connection.onreconnected(() => {
    void Promise.all([...subscriptions].map((address) => connection.invoke('Subscribe', address))).then(
      () => restoredListeners.forEach((listener) => listener()),
      (error: unknown) => restoredListeners.forEach((listener) => listener(error)),
    );
  });

  const events: Events = {
    connection,
    subscriptions,
    async subscribe(address) {
      const group = address.toLowerCase();
      subscriptions.add(group);
      // While reconnecting, the restore after it does the work.
      if (connection.state === connected) {
        try {
          await connection.invoke('Subscribe', group);
        } catch (error) {
          subscriptions.delete(group);
          throw error;
        }
      }
    },
    async unsubscribe(address) {
      const group = address.toLowerCase();
      subscriptions.delete(group);
      if (connection.state === connected) await connection.invoke('Unsubscribe', group);
    },
    onMarketChanged(listener, options) {
      const debounced = debounce(listener, options?.debounceMs ?? 300);
      // Ordered by version, never by maxBlock, which a chain reorg lowers; an older event that arrives late is dropped.
      let newest = 0;
      const stop = listen<MarketChanged>('marketChanged', (event) => {
        if (event.version <= newest) return;
        newest = event.version;
        debounced(event);
      });
      return () => (stop(), debounced.cancel());
    },
    onForgeFulfilled: (listener) => listen('forgeFulfilled', listener),
    onRestored(listener) {
      restoredListeners.add(listener);
      return () => restoredListeners.delete(listener);
    },
    async waitForForgeFulfilled(address, requestId, options = {}) {
      let stop = () => {};
      const fromEvent = new Promise<ForgeResult>((resolve) => {
        stop = listen<ForgeFulfilled>('forgeFulfilled', (event) => event.requestId === requestId && resolve({ ...event, source: 'event' }));
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await events.subscribe(address);
        const timedOut = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), options.timeoutMs ?? 45_000)));
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
