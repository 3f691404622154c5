import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from '@hatchery/platform/telemetry/logger';

/** The advisory lock only the leading listener holds ("hatchery" in ASCII). */
export const leaderLockKey = 0x6861746368657279n;

/** A term of leadership: the session holding the lock and LISTENing, and the market reads' own session. */
export interface Term {
  session: pg.Client;
  market: pg.Client;
  /** Ends the term: both sessions close, and the leader session opens new ones after the reconnect delay. */
  end(): void;
}

interface LeaderSessionOptions {
  databaseUrl: string;
  /** The channel LISTENed on while leading. */
  channel: string;
  /** How often a standby asks for the lock. */
  pollMs: number;
  /** Wait after a lost or refused database connection. */
  reconnectMs: number;
  log: Logger;
  /** Each notification of the term's LISTEN, with its payload. */
  notified(payload: string | undefined): void;
  /** Starts a term's work once the lock is held and LISTEN runs; what it returns runs when the term ends. */
  lead(term: Term): Promise<() => Promise<void>>;
}

/** A session's settings: role names it in pg_stat_activity. */
export function sessionConfig(databaseUrl: string, role: string): pg.ClientConfig {
  return {
    connectionString: databaseUrl,
    application_name: `hatchery-listener${role}`,
    keepAlive: true,
    connectionTimeoutMillis: 5_000,
    // A query that never answers means a dead server: the session is dropped and reopened.
    query_timeout: 30_000,
  };
}

/**
 * A pool of the listener's sessions for `role`: a lost server is logged, never fatal. pg emits a lost connection on the
 * pool for an idle client and on the client itself for one checked out, whose statement in flight fails with it (and
 * is handled by its caller): an 'error' event nobody listens for would end the process.
 */
export function sessionPool(databaseUrl: string, role: string, options: { max: number; idleTimeoutMillis: number }, log: Logger): pg.Pool {
  const pool = new pg.Pool({ ...sessionConfig(databaseUrl, role), ...options });
  pool.on('error', (error) => log.warn({ err: error.message, role }, 'a listener session failed'));
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Leadership over the database (docs/realtime.md): open a session, wait as a
 * standby until the advisory lock is ours, open the market session, LISTEN,
 * and lead until either session ends; then wait the reconnect delay and start
 * again, until stopped. The lock goes with the session, so a leader that dies
 * hands over to a standby within its poll interval.
 */
export function leaderSession(options: LeaderSessionOptions) {
  const stopping = new AbortController();
  let leading = false;
  let sessions = 0;
  let current: pg.Client | undefined;
  const pause = (ms: number) => sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined);

  async function term(): Promise<void> {
    const { databaseUrl, channel, pollMs, log } = options;
    const session = new pg.Client(sessionConfig(databaseUrl, ''));
    let market: pg.Client | undefined;
    let finish: (() => Promise<void>) | undefined;
    let endTerm = () => {};
    const ended = new Promise<void>((resolve) => {
      endTerm = resolve;
      session.on('error', (error) => {
        log.warn({ err: error.message }, 'listener database session failed');
        resolve();
      });
      session.on('end', resolve);
    });
    let open = true;
    void ended.then(() => (open = false));
    try {
      await session.connect();
      sessions++;
      current = session;
      while (open && !stopping.signal.aborted && !(await tryLock(session))) await Promise.race([pause(pollMs), ended]);
      if (!open || stopping.signal.aborted) return;
      market = new pg.Client(sessionConfig(databaseUrl, '-market'));
      // Losing either session ends both: the next term opens them again.
      market.on('error', (error) => {
        log.warn({ err: error.message }, 'listener market session failed');
        endTerm();
      });
      market.on('end', endTerm);
      await market.connect();
      session.on('notification', ({ payload }) => options.notified(payload));
      await session.query(`LISTEN "${channel}"`);
      leading = true;
      log.info('listener is leading');
      finish = await options.lead({ session, market, end: endTerm });
      await ended;
    } finally {
      leading = false;
      await finish?.();
      if (current === session) current = undefined;
      await Promise.all([session.end().catch(() => undefined), market?.end().catch(() => undefined)]);
    }
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        await term();
      } catch (error) {
        if (!stopping.signal.aborted) options.log.warn({ err: error }, 'listener database session ended');
      }
      if (!stopping.signal.aborted) await pause(options.reconnectMs);
    }
  }

  let running: Promise<void> | undefined;
  return {
    get leading() {
      return leading;
    },
    get stopped() {
      return stopping.signal.aborted;
    },
    /** Waits `ms`, or less if the session is stopped meanwhile. */
    pause,
    /** Sessions opened so far (1 + reconnections). */
    get sessions() {
      return sessions;
    },
    start(): void {
      running ??= run();
    },
    /** No term starts after this; `release` ends the current one (its work stopped first by the caller). */
    stop(): void {
      stopping.abort();
    },
    async release(): Promise<void> {
      await current?.end().catch(() => undefined);
      await running;
    },
  };
}

async function tryLock(session: pg.Client): Promise<boolean> {
  const { rows } = await session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [leaderLockKey.toString()]);
  return rows[0]?.locked === true;
}
