import { isDatabaseUnavailable } from '@hatchery/core/errors';
import { readFreshness } from '@hatchery/core/indexer/freshness-read';
import { notificationChannel } from '@hatchery/core/indexer/names';
import { nextMarketVersion, tablesToRead, type Listings } from '@hatchery/core/realtime/changes';
import { deliveryDeadlines } from '@hatchery/platform/aws/deadlines';
import { broadcaster } from './broadcaster';
import { coalesce, latestOnly } from './coalesce';
import { changeDetection } from './detection';
import { leaderSession, type Term } from './leader-session';
import { listenerMetrics, webhookMetrics, type MeasuredRead } from './metrics';
import { listenerOptions, type ListenerOptions, type ListenerStats } from './options';
import { keepSummaryOnSession, type SummaryKeeper } from './summary';
import { keepEventLog, type EventLogKeeper } from './event-log';
import { startWebhooks, type Webhooks } from './webhooks';

/** A marketChanged to send, and how many times these listings went out before without reaching every connection. */
interface Broadcast {
  listings: Listings;
  repeat: number;
}

/** How often the leader publishes each webhook endpoint's oldest pending delivery: the alarm's period. */
const pendingAgeIntervalMs = 60_000;
export type { ListenerOptions } from './options';

/**
 * The long-running listener (docs/realtime.md), wired from its parts: the
 * leader session (./leader-session.ts) holds the lock and LISTENs; on each
 * notification and every poll interval the change detection
 * (./detection.ts) reads what changed; the broadcaster (./broadcaster.ts)
 * sends forgeFulfilled from the forge read itself and marketChanged from a
 * lane of its own, so no read (and no fulfilment) waits behind a broadcast.
 */
export class Listener {
  readonly options: ListenerOptions;
  private readonly counters = {
    notifications: 0,
    reads: 0,
    marketReads: 0,
    failedReads: 0,
    summaries: 0,
    failedSummaries: 0,
    eventsAppended: 0,
    eventsReverted: 0,
    failedEventPasses: 0,
    marketChanged: 0,
    forgeFulfilled: 0,
    sent: 0,
    gone: 0,
    undelivered: 0,
    shardsHanded: 0,
    failedShards: 0,
  };
  private readonly metrics = listenerMetrics();
  private readonly detection: ReturnType<typeof changeDetection>;
  private readonly out: ReturnType<typeof broadcaster>;
  private readonly leadership: ReturnType<typeof leaderSession>;
  private term: Term | undefined;
  private summary: SummaryKeeper | undefined;
  private eventLog: EventLogKeeper | undefined;
  /** The webhooks' workers, on every listener task; undefined until pg-boss has started, and when no endpoint is declared. */
  private webhooks: Webhooks | undefined;
  private webhooksStarting: Promise<void> | undefined;
  private readonly webhookMetrics = webhookMetrics();
  /** Fulfilments: a short query on the leading session, then their posts. */
  private readonly reads = coalesce(() => this.readForge());
  /** The listings snapshot, on a session of its own: its count takes tens of milliseconds on a large table, which no fulfilment waits behind. */
  private readonly marketReads = coalesce(() => this.readMarket());
  /** How far behind its chains the indexer is, for the IndexerLag metric: once per poll, on the market session. */
  private readonly indexerReads = coalesce(() => this.readIndexer());
  /** Broadcasts, each starting once the last one's audience has had its time at the budget (and the minimum interval). */
  private readonly broadcasts = latestOnly(
    (broadcast: Broadcast) => this.broadcast(broadcast),
    () => this.leadership.pause(Math.max(0, this.out.nextBroadcastAt - performance.now())),
  );

  constructor(options: Partial<ListenerOptions> = {}) {
    this.options = listenerOptions(options);
    const { log } = this.options;
    this.detection = changeDetection(this.options.state, log);
    this.out = broadcaster(this.options, this.metrics, this.counters);
    this.leadership = leaderSession({
      databaseUrl: this.options.databaseUrl,
      channel: notificationChannel(),
      pollMs: this.options.pollMs,
      reconnectMs: this.options.reconnectMs,
      log,
      notified: (payload) => this.notified(payload),
      lead: (term) => this.lead(term),
    });
  }

  stats(): ListenerStats {
    return { ...this.counters, leader: this.leadership.leading, sessions: this.leadership.sessions };
  }

  start(): this {
    this.leadership.start();
    if (this.options.webhooks.endpoints.length) this.webhooksStarting = this.startWebhooks();
    return this;
  }

  /** pg-boss, started again after the reconnect delay until the database lets it: a listener without its workers still leads. */
  private async startWebhooks(): Promise<void> {
    while (!this.leadership.stopped) {
      try {
        this.webhooks = await startWebhooks({
          ...this.options.webhooks,
          databaseUrl: this.options.databaseUrl,
          log: this.options.log,
          metrics: this.webhookMetrics,
        });
        this.webhooks.dispatch();
        return;
      } catch (error) {
        this.options.log.warn({ err: error }, 'the webhooks could not start; trying again');
        await this.leadership.pause(this.options.reconnectMs);
      }
    }
  }

  /** Ends the session (releasing the lock) once the read in progress, and the broadcast in flight, are done. */
  async stop(): Promise<void> {
    this.leadership.stop();
    await this.idle();
    await this.leadership.release();
    await this.webhooksStarting;
    await this.webhooks?.stop();
  }

  /** Resolves once no read runs and no broadcast is in flight or waiting. */
  async idle(): Promise<void> {
    await this.reads.idle();
    await this.marketReads.idle();
    await this.indexerReads.idle();
    await Promise.all([this.broadcasts.idle(), this.detection.idle(), this.summary?.idle(), this.eventLog?.idle(), this.webhooks?.idle()]);
  }

  /** Forces both reads now, as a notification that names no tables would (the fallback poll does the same). */
  poke(): void {
    if (this.term) this.readAll();
  }

  private readAll(): void {
    this.reads.trigger();
    this.marketReads.trigger();
  }

  private notified(payload: string | undefined): void {
    this.counters.notifications++;
    const tables = tablesToRead(payload);
    // The log compares every table it derives events from, and a reorg's revert notifies nothing: every notification is worth a pass.
    this.eventLog?.changed(tables);
    if (tables.summary) this.summary?.changed();
    if (!tables.forgeRequests && !tables.listings) return;
    this.metrics.notified();
    if (tables.forgeRequests) this.reads.trigger();
    if (tables.listings) this.marketReads.trigger();
  }

  /** A term's work: the detection state resumed, the summary kept, and every read now and each poll interval. */
  private async lead(term: Term): Promise<() => Promise<void>> {
    await this.detection.begin();
    this.term = term;
    // After LISTEN, so that its first sum, at once, includes whatever changed before a notification could say so.
    this.summary = keepSummaryOnSession(this.options.databaseUrl, {
      timing: this.options.summary,
      log: this.options.log,
      summed: (outcome) => {
        if (outcome === 'stored') this.counters.summaries++;
        if (outcome === 'failed') this.counters.failedSummaries++;
      },
    });
    this.eventLog = keepEventLog(this.options.databaseUrl, {
      timing: this.options.eventLog,
      log: this.options.log,
      written: (outcome) => {
        if (outcome === 'failed') this.counters.failedEventPasses++;
        else {
          this.counters.eventsAppended += outcome.appended;
          this.counters.eventsReverted += outcome.reverted;
          this.options.eventsWritten(outcome);
          // Every pass, not only one that appended: a finality that moved lets a safe or finalized endpoint's events go.
          this.webhooks?.dispatch();
        }
      },
    });
    const readEverything = () => {
      this.readAll();
      this.indexerReads.trigger();
      this.eventLog?.changed({ nfts: false });
    };
    const poll = setInterval(readEverything, this.options.pollMs);
    const pending = setInterval(() => void this.publishPendingAges(), pendingAgeIntervalMs);
    readEverything();
    return async () => {
      clearInterval(poll);
      clearInterval(pending);
      this.term = undefined;
      await this.summary?.stop();
      this.summary = undefined;
      await this.eventLog?.stop();
      this.eventLog = undefined;
      await this.reads.idle();
      await this.marketReads.idle();
      await this.indexerReads.idle();
    };
  }

  /** New fulfilments (the latency-sensitive event), sent at once. Never throws. */
  private async readForge(): Promise<void> {
    const term = this.term;
    if (!term || this.leadership.stopped) return;
    this.counters.reads++;
    const measured = this.metrics.readStarted();
    try {
      const forge = await this.detection.fulfilments(term.session);
      for (const fulfilment of forge.fresh) await this.out.fulfil(fulfilment);
      forge.seen();
      measured.finished(true);
    } catch (error) {
      this.failedRead(error, term, measured);
    }
  }

  /** The listings snapshot, compared with the last one: a change is handed to the broadcast lane. Never throws. */
  private async readMarket(): Promise<void> {
    const term = this.term;
    if (!term || this.leadership.stopped) return;
    this.counters.marketReads++;
    const measured = this.metrics.readStarted();
    try {
      const changed = await this.detection.market(term.market);
      if (changed) this.broadcasts.push({ listings: changed, repeat: 0 });
      measured.finished(true);
    } catch (error) {
      this.failedRead(error, term, measured);
    }
  }

  /** The indexer's lag, published when Ponder's checkpoint tells it. Never throws: a failure here is the market read's to report. */
  private async readIndexer(): Promise<void> {
    const term = this.term;
    if (!term || this.leadership.stopped) return;
    try {
      const freshness = await readFreshness(term.market);
      if (freshness !== 'unknown') this.metrics.indexerLag(Math.max(...freshness.chains.map((chain) => chain.lagSeconds)));
    } catch (error) {
      this.options.log.debug({ err: error }, 'indexer freshness could not be read');
    }
  }

  /**
   * marketChanged, numbered on the market session of the term it starts in; without one, the next term resyncs.
   * One that did not reach every connection goes again, unless newer listings are waiting to go instead.
   */
  private async broadcast({ listings, repeat }: Broadcast): Promise<void> {
    const term = this.term;
    if (!term) return;
    let reachedAll = false;
    try {
      reachedAll = await this.out.broadcast(listings, () => nextMarketVersion(term.market));
    } catch (error) {
      this.options.log.error({ err: error }, 'marketChanged could not be sent');
    }
    if (reachedAll || this.leadership.stopped) return;
    if (repeat < deliveryDeadlines.broadcastRepeats) this.broadcasts.offer({ listings, repeat: repeat + 1 });
    else this.options.log.warn({ repeats: repeat }, 'marketChanged still reached not every connection; the next change sends it again');
  }

  /** Each endpoint's oldest pending delivery, for its alarm: the leader's to publish, so one task does. */
  private async publishPendingAges(): Promise<void> {
    try {
      const ages = await this.webhooks?.pendingAges();
      for (const [endpoint, seconds] of Object.entries(ages ?? {})) this.webhookMetrics.oldestPending(endpoint, seconds);
    } catch (error) {
      this.options.log.warn({ err: error }, 'the webhooks’ pending deliveries could not be read');
    }
  }

  private failedRead(error: unknown, term: Term, measured: MeasuredRead): void {
    this.counters.failedReads++;
    measured.finished(false);
    if (isDatabaseUnavailable(error)) {
      this.options.log.warn({ err: error }, 'listener read failed; reconnecting');
      term.end();
    } else {
      this.options.log.error({ err: error }, 'listener read failed');
    }
  }
}
