import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { config } from '@hatchery/core/config';
import { isDatabaseUnavailable } from '@hatchery/core/errors';
import { limits } from '@hatchery/core/limits';
import { logger, type Logger } from '@hatchery/core/logger';
import { marketChange, notificationChannel, readFulfilments, readListingsSnapshot } from '@hatchery/core/realtime/changes';
import { connectionStore, type ConnectionStore } from '@hatchery/core/realtime/connections';
import { forgeFulfilledMessage, marketChangedMessage } from '@hatchery/core/realtime/events';
import { hubConnections, managementClient, type HubConnections } from '@hatchery/core/realtime/management';
import { coalesce } from './coalesce';
import { fanOut } from './fan-out';
import { listenerMetrics } from './metrics';
import { dynamoStateStore, resumeFrom, type DetectionState, type StateStore } from './state';

/** The advisory lock only the leading listener holds ("hatchery" in ASCII). */
export const leaderLockKey = 0x6861746368657279n;

export interface ListenerOptions {
  databaseUrl: string;
  /** The management API (`/@connections`) events are posted through. */
  managementEndpoint: string;
  /** Fallback re-read interval, also how often a standby asks for the lock. */
  pollMs: number;
  /** Wait after a lost or refused database connection. */
  reconnectMs: number;
  fanOutConcurrency: number;
  store: ConnectionStore;
  connections: HubConnections;
  state: StateStore;
  log: Logger;
}

export interface ListenerStats {
  leader: boolean;
  /** Database sessions opened (1 + reconnections). */
  sessions: number;
  notifications: number;
  reads: number;
  /** Reads that failed for a reason other than a missing table. */
  failedReads: number;
  marketChanged: number;
  forgeFulfilled: number;
  sent: number;
  gone: number;
}

const stateHeartbeatMs = limits.hub.listenerStateMaxAgeMs / 4;

/**
 * The long-running listener (DESIGN.md "The listener"): LISTENs on the
 * indexer's channel, re-reads on each notification and every poll interval,
 * and fans events out through the management API. Only the holder of the
 * advisory lock reads and fans out; any other instance waits as a standby.
 */
export class Listener {
  readonly options: ListenerOptions;
  private readonly counters: ListenerStats = { leader: false, sessions: 0, notifications: 0, reads: 0, failedReads: 0, marketChanged: 0, forgeFulfilled: 0, sent: 0, gone: 0 };
  private readonly reads = coalesce(() => this.read());
  private readonly metrics = listenerMetrics();
  private readonly stopping = new AbortController();
  private session: pg.Client | undefined;
  private state: DetectionState | undefined;
  private savedAt = 0;
  private running: Promise<void> | undefined;

  constructor(options: Partial<ListenerOptions> = {}) {
    const databaseUrl = options.databaseUrl ?? config().DATABASE_URL;
    const managementEndpoint = options.managementEndpoint ?? config().WEBSOCKET_MANAGEMENT_ENDPOINT;
    if (!managementEndpoint) throw new Error('The listener needs WEBSOCKET_MANAGEMENT_ENDPOINT (the WebSocket API management endpoint).');
    const fanOutConcurrency = options.fanOutConcurrency ?? limits.hub.fanOutConcurrency;
    this.options = {
      databaseUrl,
      managementEndpoint,
      pollMs: options.pollMs ?? limits.listenerPollMs,
      reconnectMs: options.reconnectMs ?? limits.listenerReconnectMs,
      fanOutConcurrency,
      store: options.store ?? connectionStore(),
      connections: options.connections ?? hubConnections(managementClient(managementEndpoint, fanOutConcurrency)),
      state: options.state ?? dynamoStateStore(),
      log: options.log ?? logger().child({ component: 'listener' }),
    };
  }

  stats(): ListenerStats {
    return { ...this.counters };
  }

  start(): this {
    this.running ??= this.run();
    return this;
  }

  /** Ends the session (releasing the lock) once the read in progress, and its fan-out, are done. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.reads.idle();
    await this.session?.end().catch(() => undefined);
    await this.running;
  }

  /** Forces a read now, as a notification would (the fallback poll does the same). */
  poke(): void {
    if (this.counters.leader) this.reads.trigger();
  }

  private get stopped() {
    return this.stopping.signal.aborted;
  }

  private async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.lead();
      } catch (error) {
        if (!this.stopped) this.options.log.warn({ err: error }, 'listener database session ended');
      }
      if (!this.stopped) await this.pause(this.options.reconnectMs);
    }
  }

  /** One database session: wait for the lock, then LISTEN and read until the session ends. */
  private async lead(): Promise<void> {
    const { databaseUrl, pollMs, log } = this.options;
    const client = new pg.Client({
      connectionString: databaseUrl,
      application_name: 'hatchery-listener',
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
      // A query that never answers means a dead server: the session is dropped and reopened.
      query_timeout: 30_000,
    });
    const ended = new Promise<void>((resolve) => {
      client.on('error', (error) => {
        log.warn({ err: error.message }, 'listener database session failed');
        resolve();
      });
      client.on('end', resolve);
    });
    let poll: NodeJS.Timeout | undefined;
    try {
      await client.connect();
      this.counters.sessions++;
      this.session = client;
      let isOpen = true;
      void ended.then(() => (isOpen = false));
      while (isOpen && !this.stopped && !(await this.tryLock(client))) await Promise.race([this.pause(pollMs), ended]);
      if (!isOpen || this.stopped) return;

      const saved = await this.options.state.load().catch((error: unknown) => log.warn({ err: error }, 'listener state could not be loaded'));
      this.state = resumeFrom(saved ?? undefined, this.state, Date.now(), limits.hub.listenerStateMaxAgeMs);
      client.on('notification', () => {
        this.counters.notifications++;
        this.metrics.notified();
        this.reads.trigger();
      });
      await client.query(`LISTEN ${notificationChannel}`);
      this.counters.leader = true;
      log.info('listener is leading');
      poll = setInterval(() => this.reads.trigger(), pollMs);
      this.reads.trigger();
      await ended;
    } finally {
      clearInterval(poll);
      this.counters.leader = false;
      await this.reads.idle();
      if (this.session === client) this.session = undefined;
      await client.end().catch(() => undefined);
    }
  }

  private async tryLock(client: pg.Client): Promise<boolean> {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [leaderLockKey.toString()]);
    return rows[0]?.locked === true;
  }

  /** One read: new fulfilments first (the latency-sensitive event), then the listings snapshot. Never throws. */
  private async read(): Promise<void> {
    const client = this.session;
    if (!client || !this.counters.leader || this.stopped) return;
    const { log, store, connections, fanOutConcurrency } = this.options;
    const send = fanOut({ connections, store, concurrency: fanOutConcurrency, log });
    this.counters.reads++;
    const measured = this.metrics.readStarted();
    try {
      const previous = this.state;
      const forge = await readFulfilments(client, previous?.cursor);
      if (forge.fresh.length > limits.hub.backfillFulfilments) log.warn({ skipped: forge.fresh.length }, 'fulfilments back-filled by the indexer are not sent');
      for (const fulfilment of forge.fresh.length > limits.hub.backfillFulfilments ? [] : forge.fresh) {
        const postedAt = performance.now();
        const delivery = await send.toGroup(fulfilment.buyer, forgeFulfilledMessage(fulfilment));
        this.count('forgeFulfilled', delivery);
        measured.delivered('forgeFulfilled', delivery, postedAt);
      }
      // The cursor moves as soon as its events are out, so a failure below cannot send them twice.
      this.state = { snapshot: previous?.snapshot, cursor: forge.cursor, readAt: Date.now() };
      const snapshot = await readListingsSnapshot(client);
      const changed = marketChange(previous?.snapshot, snapshot);
      if (changed) {
        const postedAt = performance.now();
        const delivery = await send.toAll(marketChangedMessage(changed));
        this.count('marketChanged', delivery);
        measured.delivered('marketChanged', delivery, postedAt);
      }
      this.state = { snapshot, cursor: forge.cursor, readAt: Date.now() };
      await this.save(previous);
      measured.finished(true);
    } catch (error) {
      this.counters.failedReads++;
      measured.finished(false);
      if (isDatabaseUnavailable(error)) {
        log.warn({ err: error }, 'listener read failed; reconnecting');
        await client.end().catch(() => undefined);
      } else {
        log.error({ err: error }, 'listener read failed');
      }
    }
  }

  private count(event: 'marketChanged' | 'forgeFulfilled', delivery: { sent: number; gone: number }) {
    this.counters[event]++;
    this.counters.sent += delivery.sent;
    this.counters.gone += delivery.gone;
  }

  private async save(previous: DetectionState | undefined): Promise<void> {
    const state = this.state;
    if (!state) return;
    const changed = JSON.stringify({ ...previous, readAt: 0 }) !== JSON.stringify({ ...state, readAt: 0 });
    if (!changed && state.readAt - this.savedAt < stateHeartbeatMs) return;
    try {
      await this.options.state.save(state);
      this.savedAt = state.readAt;
    } catch (error) {
      this.options.log.warn({ err: error }, 'listener state could not be saved');
    }
  }
}
