import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { config } from '@hatchery/platform/config';
import { isDatabaseUnavailable } from '@hatchery/core/errors';
import { limits } from '@hatchery/core/limits';
import { logger, type Logger } from '@hatchery/platform/telemetry/logger';
import { readFreshness } from '@hatchery/core/indexer/freshness-read';
import { notificationChannel } from '@hatchery/core/indexer/names';
import { marketChange, nextMarketVersion, readFulfilments, readListingsSnapshot, tablesToRead, type Fulfilment } from '@hatchery/core/realtime/changes';
import { connectionStore, shards, type ConnectionStore } from '@hatchery/core/realtime/connections';
import { forgeFulfilledMessage, marketChangedMessage, type MarketChanged } from '@hatchery/core/realtime/events';
import { budgetShares, nextBroadcastAt, pacer, type FanOutBudget, type Pacer } from '@hatchery/core/realtime/budget';
import { addDeliveries, inOnePage, noDelivery, post, type Delivery, type FanOutParts } from '@hatchery/core/realtime/fan-out';
import { hubConnections, managementClient, type HubConnections } from '@hatchery/platform/aws/management';
import { coalesce, latestOnly } from './coalesce';
import { listenerMetrics, type MeasuredRead } from './metrics';
import { functionShards, inProcessShards, shardDeadline, type ShardInvoker } from './shards';
import { dynamoStateStore, resumeFrom, type DetectionState, type StateStore } from './state';
import { keepSummary, type SummaryKeeper, type SummaryTiming } from './summary';

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
  /** Broadcasts up to this size the listener posts itself; see limits.hub.smallAudience. */
  smallAudience: number;
  store: ConnectionStore;
  /** Where the listener's own broadcast posts go. */
  connections: HubConnections;
  /** Where forgeFulfilled goes: a socket pool of its own, so it never queues behind a broadcast. */
  forgeConnections: HubConnections;
  /** Who posts a large broadcast's shards: the fan-out function when FANOUT_FUNCTION_NAME names one, else the listener itself. */
  shards: ShardInvoker;
  /** How many shards `shards` posts at once (the local stack's worker threads; in AWS every shard has an invocation of its own). */
  shardConcurrency: number;
  /** All posts' rate and the least time between broadcasts (FANOUT_POSTS_PER_SECOND, FANOUT_MIN_INTERVAL_MS). */
  budget: FanOutBudget;
  state: StateStore;
  /** How often the leader sums the transparency summary's row; see limits.summaryRefresh. */
  summary: SummaryTiming;
  log: Logger;
}

export interface ListenerStats {
  leader: boolean;
  /** Database sessions opened (1 + reconnections). */
  sessions: number;
  notifications: number;
  /** Reads of the forge requests. */
  reads: number;
  /** Reads of the listings snapshot. */
  marketReads: number;
  /** Reads that failed for a reason other than a missing table. */
  failedReads: number;
  marketChanged: number;
  forgeFulfilled: number;
  /** Posts the listener made, and those the fan-out function's invocations reported. */
  sent: number;
  gone: number;
  /** Shards of broadcasts handed to the fan-out function. */
  shardsHanded: number;
  /** Shards that could not be read or handed out. */
  failedShards: number;
  /** Sums of the transparency summary stored, and those that failed. */
  summaries: number;
  failedSummaries: number;
}

const stateHeartbeatMs = limits.hub.listenerStateMaxAgeMs / 4;

/**
 * The long-running listener (docs/realtime.md): LISTENs on the
 * indexer's channel, reads what each notification's table list names (both
 * for any other payload) and both every poll interval, and fans events out
 * through the management API. Only the holder of the advisory lock reads and
 * fans out; any other instance waits as a standby. A read of the forge
 * requests sends forgeFulfilled itself; a read of the listings hands
 * marketChanged to the broadcast lane without waiting for it, so no read (and
 * no fulfilment) ever waits behind a broadcast.
 */
export class Listener {
  readonly options: ListenerOptions;
  private readonly counters: ListenerStats = {
    leader: false,
    sessions: 0,
    notifications: 0,
    reads: 0,
    marketReads: 0,
    failedReads: 0,
    marketChanged: 0,
    forgeFulfilled: 0,
    sent: 0,
    gone: 0,
    shardsHanded: 0,
    failedShards: 0,
    summaries: 0,
    failedSummaries: 0,
  };
  /** Fulfilments: a short query on the leading session, then their posts. */
  private readonly reads = coalesce(() => this.read());
  /** The listings snapshot, on a session of its own: its count takes tens of milliseconds on a large table, which no fulfilment waits behind. */
  private readonly marketReads = coalesce(() => this.readMarket());
  /** How far behind its chains the indexer is, for the IndexerLag metric: once per poll, on the market session. */
  private readonly indexerReads = coalesce(() => this.readIndexer());
  /** Broadcasts, each starting once the last one's audience has had its time at the budget (and the minimum interval). */
  private readonly broadcasts = latestOnly(
    (snapshot: MarketChanged) => this.broadcast(snapshot),
    () => this.pause(Math.max(0, this.nextBroadcastAt - performance.now())),
  );
  private nextBroadcastAt = 0;
  /** forgeFulfilled's share of the budget, shared by every fulfilment. */
  private readonly targetedPace: Pacer | undefined;
  /** The state is written in a lane of its own, so a slow write never delays the next read (and its fulfilments). */
  private readonly saves = latestOnly((state: DetectionState) => this.write(state));
  /** The summary's row, kept during a term on a session of its own (./summary.ts). */
  private summary: SummaryKeeper | undefined;
  /** Set when leadership begins: the term's first read sends marketChanged whatever came before, so clients resync. */
  private resync = false;
  private readonly metrics = listenerMetrics();
  private readonly stopping = new AbortController();
  private session: pg.Client | undefined;
  private marketSession: pg.Client | undefined;
  private state: DetectionState | undefined;
  private savedAt = 0;
  private running: Promise<void> | undefined;

  constructor(options: Partial<ListenerOptions> = {}) {
    const databaseUrl = options.databaseUrl ?? config().DATABASE_URL;
    const managementEndpoint = options.managementEndpoint ?? config().WEBSOCKET_MANAGEMENT_ENDPOINT;
    if (!managementEndpoint) throw new Error('The listener needs WEBSOCKET_MANAGEMENT_ENDPOINT (the WebSocket API management endpoint).');
    const fanOutConcurrency = options.fanOutConcurrency ?? limits.hub.fanOutConcurrency;
    const store = options.store ?? connectionStore();
    const budget = options.budget ?? { postsPerSecond: config().FANOUT_POSTS_PER_SECOND, minIntervalMs: config().FANOUT_MIN_INTERVAL_MS };
    // With a budget, every post goes through a pacer, which retries a throttled post itself.
    const paced = { paced: budgetShares(budget) !== undefined };
    const connections = options.connections ?? hubConnections(managementClient(managementEndpoint, fanOutConcurrency, 'default', paced));
    const log = options.log ?? logger().child({ component: 'listener' });
    const functionName = config().FANOUT_FUNCTION_NAME;
    this.options = {
      databaseUrl,
      managementEndpoint,
      pollMs: options.pollMs ?? limits.listenerPollMs,
      reconnectMs: options.reconnectMs ?? limits.listenerReconnectMs,
      fanOutConcurrency,
      smallAudience: options.smallAudience ?? limits.hub.smallAudience,
      store,
      connections,
      forgeConnections: options.forgeConnections ?? hubConnections(managementClient(managementEndpoint, fanOutConcurrency, 'forge', paced)),
      shards: options.shards ?? (functionName ? functionShards(functionName) : inProcessShards({ store, connections, concurrency: fanOutConcurrency, log })),
      shardConcurrency: options.shardConcurrency ?? limits.hub.connectionShards,
      budget,
      state: options.state ?? dynamoStateStore(),
      summary: options.summary ?? limits.summaryRefresh,
      log,
    };
    const targeted = budgetShares(this.options.budget)?.targeted;
    // A second's worth at once: a buyer's group is a few connections, which go out together.
    this.targetedPace = targeted === undefined ? undefined : pacer(targeted, Math.max(1, Math.floor(targeted)));
  }

  stats(): ListenerStats {
    return { ...this.counters };
  }

  start(): this {
    this.running ??= this.run();
    return this;
  }

  /** Ends the session (releasing the lock) once the read in progress, and the broadcast in flight, are done. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.idle();
    await this.session?.end().catch(() => undefined);
    await this.running;
  }

  /** Resolves once no read runs and no broadcast is in flight or waiting. */
  async idle(): Promise<void> {
    await this.reads.idle();
    await this.marketReads.idle();
    await this.indexerReads.idle();
    await Promise.all([this.broadcasts.idle(), this.saves.idle(), this.summary?.idle()]);
  }

  /** Forces both reads now, as a notification that names no tables would (the fallback poll does the same). */
  poke(): void {
    if (this.counters.leader) this.readAll();
  }

  private readAll(): void {
    this.reads.trigger();
    this.marketReads.trigger();
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

  private databaseConfig(role: string): pg.ClientConfig {
    return {
      connectionString: this.options.databaseUrl,
      application_name: `hatchery-listener${role}`,
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
      // A query that never answers means a dead server: the session is dropped and reopened.
      query_timeout: 30_000,
    };
  }

  private databaseClient(role: string): pg.Client {
    return new pg.Client(this.databaseConfig(role));
  }

  /**
   * The summary's session: a pool of one that reconnects on its next sum after
   * a failure, which never ends the term (its sums are no event's).
   */
  private summarySession(): pg.Pool {
    const pool = new pg.Pool({ ...this.databaseConfig('-summary'), max: 1, idleTimeoutMillis: 0 });
    pool.on('error', (error) => this.options.log.warn({ err: error.message }, 'listener summary session failed'));
    return pool;
  }

  private keepSummary(session: pg.Pool): SummaryKeeper {
    return keepSummary({
      session,
      timing: this.options.summary,
      log: this.options.log,
      summed: (outcome) => {
        if (outcome === 'stored') this.counters.summaries++;
        if (outcome === 'failed') this.counters.failedSummaries++;
      },
    });
  }

  /** One database session: wait for the lock, then LISTEN and read until the session (or the market reads' own) ends. */
  private async lead(): Promise<void> {
    const { pollMs, log } = this.options;
    const client = this.databaseClient('');
    let market: pg.Client | undefined;
    let summarySession: pg.Pool | undefined;
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

      market = this.databaseClient('-market');
      // Losing either session ends both: the next term opens them again.
      market.on('error', (error) => {
        log.warn({ err: error.message }, 'listener market session failed');
        void client.end().catch(() => undefined);
      });
      market.on('end', () => void client.end().catch(() => undefined));
      await market.connect();
      this.marketSession = market;
      const saved = await this.options.state.load().catch((error: unknown) => log.warn({ err: error }, 'listener state could not be loaded'));
      this.state = resumeFrom(saved ?? undefined, this.state, Date.now(), limits.hub.listenerStateMaxAgeMs);
      client.on('notification', ({ payload }) => {
        this.counters.notifications++;
        const tables = tablesToRead(payload);
        if (tables.summary) this.summary?.changed();
        if (!tables.forgeRequests && !tables.listings) return;
        this.metrics.notified();
        if (tables.forgeRequests) this.reads.trigger();
        if (tables.listings) this.marketReads.trigger();
      });
      await client.query(`LISTEN "${notificationChannel()}"`);
      this.counters.leader = true;
      this.resync = true;
      log.info('listener is leading');
      // After LISTEN, so that its first sum, at once, includes whatever changed before a notification could say so.
      summarySession = this.summarySession();
      this.summary = this.keepSummary(summarySession);
      const readEverything = () => {
        this.readAll();
        this.indexerReads.trigger();
      };
      poll = setInterval(readEverything, pollMs);
      readEverything();
      await ended;
    } finally {
      clearInterval(poll);
      this.counters.leader = false;
      await this.summary?.stop();
      this.summary = undefined;
      await summarySession?.end().catch(() => undefined);
      await this.reads.idle();
      await this.marketReads.idle();
      await this.indexerReads.idle();
      if (this.session === client) this.session = undefined;
      if (this.marketSession === market) this.marketSession = undefined;
      await Promise.all([client.end().catch(() => undefined), market?.end().catch(() => undefined)]);
    }
  }

  private async tryLock(client: pg.Client): Promise<boolean> {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [leaderLockKey.toString()]);
    return rows[0]?.locked === true;
  }

  /** New fulfilments (the latency-sensitive event), posted at once. Never throws. */
  private async read(): Promise<void> {
    const client = this.session;
    if (!client || !this.counters.leader || this.stopped) return;
    const { log } = this.options;
    this.counters.reads++;
    const measured = this.metrics.readStarted();
    try {
      const previous = this.state;
      const forge = await readFulfilments(client, previous?.cursor);
      if (forge.fresh.length > limits.hub.backfillFulfilments) log.warn({ skipped: forge.fresh.length }, 'fulfilments back-filled by the indexer are not sent');
      for (const fulfilment of forge.fresh.length > limits.hub.backfillFulfilments ? [] : forge.fresh) await this.sendFulfilment(fulfilment);
      // The cursor moves as soon as its events are out, so a failure later cannot send them twice.
      this.state = { snapshot: this.state?.snapshot, cursor: forge.cursor, readAt: Date.now() };
      this.save(previous);
      measured.finished(true);
    } catch (error) {
      this.failedRead(error, client, measured);
    }
  }

  /** The listings snapshot, compared with the last one: a change is handed to the broadcast lane. Never throws. */
  private async readMarket(): Promise<void> {
    const client = this.marketSession;
    if (!client || !this.counters.leader || this.stopped) return;
    this.counters.marketReads++;
    const measured = this.metrics.readStarted();
    try {
      const previous = this.state;
      const snapshot = await readListingsSnapshot(client);
      const changed = marketChange(this.resync ? undefined : previous?.snapshot, snapshot);
      if (changed) this.broadcasts.push({ ...changed, version: await nextMarketVersion(client) });
      this.resync = false;
      this.state = { snapshot, cursor: this.state?.cursor, readAt: Date.now() };
      this.save(previous);
      measured.finished(true);
    } catch (error) {
      this.failedRead(error, client, measured);
    }
  }

  /** The indexer's lag, published when Ponder's checkpoint tells it. Never throws: a failure here is the market read's to report. */
  private async readIndexer(): Promise<void> {
    const client = this.marketSession;
    if (!client || !this.counters.leader || this.stopped) return;
    try {
      const freshness = await readFreshness(client);
      if (freshness !== 'unknown') this.metrics.indexerLag(Math.max(...freshness.chains.map((chain) => chain.lagSeconds)));
    } catch (error) {
      this.options.log.debug({ err: error }, 'indexer freshness could not be read');
    }
  }

  private failedRead(error: unknown, client: pg.Client, measured: MeasuredRead): void {
    this.counters.failedReads++;
    measured.finished(false);
    if (isDatabaseUnavailable(error)) {
      this.options.log.warn({ err: error }, 'listener read failed; reconnecting');
      void client.end().catch(() => undefined);
    } else {
      this.options.log.error({ err: error }, 'listener read failed');
    }
  }

  private async sendFulfilment(fulfilment: Fulfilment): Promise<void> {
    const { store, forgeConnections, fanOutConcurrency, log } = this.options;
    const parts: FanOutParts = { store, connections: forgeConnections, concurrency: fanOutConcurrency, log, pace: this.targetedPace };
    const postedAt = performance.now();
    const delivery = await post(store.group(fulfilment.buyer), forgeFulfilledMessage(fulfilment), parts, Date.now() + limits.hub.targetedDeadlineMs);
    this.count(delivery);
    this.counters.forgeFulfilled++;
    this.metrics.delivered('forgeFulfilled', delivery, postedAt);
  }

  /**
   * marketChanged to every connection, all shards at once. One read of each
   * shard tells an empty one, which costs nothing more, a small one, which
   * the listener posts itself with the ids it already has, and a larger one,
   * which it hands to the shard invoker. The broadcast share of the budget is
   * divided among the shards that post at once, and the next broadcast waits
   * until this one's audience has had its time at that share.
   */
  private async broadcast(snapshot: MarketChanged): Promise<void> {
    const { store, connections, fanOutConcurrency, smallAudience, shards: invoke, shardConcurrency, budget, log } = this.options;
    const frame = marketChangedMessage(snapshot);
    const perShard = Math.floor(smallAudience / shards.length);
    this.counters.marketChanged++;
    const startedAt = performance.now();
    // What the listener posted itself, and what the fan-out function's invocations report (they publish their own metrics).
    let own: Delivery = noDelivery;
    let handed: Delivery = noDelivery;
    const failed = (shard: number) => (error: unknown) => {
      this.counters.failedShards++;
      log.error({ err: error, shard }, 'a shard of a broadcast could not be handed out');
    };
    // One more than a small shard may hold: the read then ends short of the limit exactly when the shard is small.
    const peeks = await Promise.all(shards.map((shard) => store.peek(shard, perShard + 1).then((peek) => ({ shard, peek }), failed(shard))));
    const posting = peeks.filter((each) => each !== undefined).filter(({ peek }) => peek.ids.length > 0 || !peek.complete);
    const small = posting.filter(({ peek }) => peek.complete);
    const large = posting.filter(({ peek }) => !peek.complete);
    const lanes = small.length + Math.min(large.length, Math.max(1, shardConcurrency));
    const broadcastShare = budgetShares(budget)?.broadcast;
    const postsPerSecond = broadcastShare === undefined ? undefined : broadcastShare / Math.max(1, lanes);
    await Promise.all([
      ...small.map(async ({ peek }) => {
        const parts: FanOutParts = { store, connections, concurrency: fanOutConcurrency, log, pace: postsPerSecond ? pacer(postsPerSecond) : undefined };
        const delivery = await post(inOnePage(peek.ids), frame, parts, shardDeadline());
        own = addDeliveries(own, delivery);
      }),
      ...large.map(async ({ shard }) => {
        if (!invoke.postsHere) this.counters.shardsHanded++;
        const delivery = await invoke({ shard, frame, ...(postsPerSecond && { postsPerSecond }) }).catch(failed(shard));
        if (delivery && invoke.postsHere) own = addDeliveries(own, delivery);
        else if (delivery) handed = addDeliveries(handed, delivery);
      }),
    ]);
    const total = addDeliveries(own, handed);
    this.count(total);
    const audience = total.sent + total.gone + total.failed + total.skipped;
    this.nextBroadcastAt = nextBroadcastAt(startedAt, audience, budget);
    this.metrics.delivered('marketChanged', own, startedAt);
  }

  private count(delivery: Delivery) {
    this.counters.sent += delivery.sent;
    this.counters.gone += delivery.gone;
  }

  private save(previous: DetectionState | undefined): void {
    const state = this.state;
    if (!state) return;
    const changed = JSON.stringify({ ...previous, readAt: 0 }) !== JSON.stringify({ ...state, readAt: 0 });
    if (changed || state.readAt - this.savedAt >= stateHeartbeatMs) this.saves.push(state);
  }

  private async write(state: DetectionState): Promise<void> {
    try {
      await this.options.state.save(state);
      this.savedAt = state.readAt;
    } catch (error) {
      this.options.log.warn({ err: error }, 'listener state could not be saved');
    }
  }
}
