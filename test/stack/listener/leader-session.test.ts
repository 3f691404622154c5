import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { freePort } from '@hatchery/local/ports';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import { leaderLockKey, leaderSession, type Term } from '@hatchery/listener/leader-session';

/**
 * Leadership over a real PostgreSQL: the advisory lock held by one session at
 * a time, the standby's poll for it, LISTEN on the leader's session, and what
 * ends a term (its session lost, its market session lost, `end()`), each
 * followed by a new session after the reconnect delay.
 */
let database: EmbeddedDatabase;
let dataDir: string;
let admin: pg.Client;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-leader-'));
  database = await startEmbeddedPostgres({ dataDir, persistent: false, templateDir: inject('postgresTemplateDir') });
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await database?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const channel = 'leader_session_test';
const pollMs = 50;
const reconnectMs = 300;

interface Candidate {
  session: ReturnType<typeof leaderSession>;
  /** Each term: when it began, and when its work was told it ended. */
  terms: { term: Term; began: number; ended?: number }[];
  payloads: (string | undefined)[];
  lines: { msg: string }[];
}

/** The sessions started in a test, stopped after it whatever its outcome. */
const started: Candidate[] = [];
afterEach(async () => {
  for (const each of started.splice(0)) {
    each.session.stop();
    await each.session.release();
  }
});

/** A leader session that records its terms (when each began and ended) and the payloads it was notified of. */
function candidate(databaseUrl = database.url, { reconnectAfterMs = reconnectMs } = {}): Candidate {
  const terms: Candidate['terms'] = [];
  const payloads: Candidate['payloads'] = [];
  const lines: Candidate['lines'] = [];
  const session = leaderSession({
    databaseUrl,
    channel,
    pollMs,
    reconnectMs: reconnectAfterMs,
    log: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }),
    notified: (payload) => payloads.push(payload),
    lead: async (term) => {
      const record: Candidate['terms'][number] = { term, began: performance.now() };
      terms.push(record);
      return async () => {
        record.ended = performance.now();
      };
    },
  });
  const each = { session, terms, payloads, lines };
  started.push(each);
  session.start();
  return each;
}

/** The backends of the listener's sessions, by role ('' for the lock's, '-market'). */
async function backends(role: '' | '-market'): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [`hatchery-listener${role}`]);
  return rows.map((row) => row.pid);
}

/** The backend holding the leader's lock, if one does. */
async function lockHolder(): Promise<number | undefined> {
  const key = BigInt.asUintN(64, leaderLockKey);
  const { rows } = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = $2 AND objsubid = 1`,
    [String(key >> 32n), String(key & 0xffffffffn)],
  );
  return rows[0]?.pid;
}

const until = (check: () => unknown, timeout = 10_000) => vi.waitFor(() => expect(check()).toBeTruthy(), { timeout, interval: 10 });

/** Until the standby (the lock session that does not hold the lock) has asked for it `times` more times, seen in pg_stat_activity. */
async function untilAsked(times: number): Promise<void> {
  const holder = await lockHolder();
  const [standby] = (await backends('')).filter((pid) => pid !== holder);
  const asks = new Set<string>();
  await vi.waitFor(
    async () => {
      const { rows } = await admin.query<{ started: string }>(
        `SELECT query_start::text AS started FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%pg_try_advisory_lock%'`,
        [standby],
      );
      if (rows[0]) asks.add(rows[0].started);
      expect(asks.size).toBeGreaterThan(times);
    },
    { timeout: 10_000, interval: 10 },
  );
}

describe('the leader session', () => {
  it('leads alone: a second session waits as a standby while the first holds the lock', async () => {
    const first = candidate();
    await until(() => first.session.leading);
    expect(first.lines.map((line) => line.msg)).toContain('listener is leading');
    const second = candidate();
    await until(() => second.session.sessions === 1);
    // A standby asks for the lock each poll: once it has asked and been refused three times over, it has not led.
    await untilAsked(3);
    expect(second.session.leading).toBe(false);
    expect(second.terms).toEqual([]);
    // The lock's session is the first's, the market session only the leader opens.
    expect(await backends('')).toHaveLength(2);
    expect(await backends('-market')).toHaveLength(1);
    expect(await lockHolder()).toBe((await first.terms[0]!.term.session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
  });

  it("hands each notification's payload on the channel to the leader, and none to a standby", async () => {
    const first = candidate();
    await until(() => first.session.leading);
    const second = candidate();
    await until(() => second.session.sessions === 1);
    await admin.query(`SELECT pg_notify($1, '["listings"]')`, [channel]);
    await admin.query(`NOTIFY ${channel}`);
    await until(() => first.payloads.length === 2);
    expect(first.payloads).toEqual(['["listings"]', '']);
    expect(second.payloads).toEqual([]);
  });

  it('lets the standby take over within its poll once the leader stops, and stop() releases the lock', async () => {
    const first = candidate();
    await until(() => first.session.leading);
    const second = candidate();
    await until(() => second.session.sessions === 1);
    first.session.stop();
    await first.session.release();
    expect(first.session.leading).toBe(false);
    expect(first.terms[0]!.ended).toBeDefined();
    await until(() => second.session.leading);
    expect(second.session.sessions).toBe(1);
    // The new leader LISTENs.
    await admin.query(`SELECT pg_notify($1, 'after takeover')`, [channel]);
    await until(() => second.payloads.length === 1);

    second.session.stop();
    await second.session.release();
    expect(await lockHolder()).toBeUndefined();
    expect(await backends('')).toEqual([]);
    expect(await backends('-market')).toEqual([]);
  });

  it('ends the term when its session is lost, and opens a new one after the reconnect delay', async () => {
    const leader = candidate();
    await until(() => leader.session.leading);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', ['hatchery-listener']);
    await until(() => leader.terms.length === 2 && leader.session.leading);
    const [lost, next] = leader.terms;
    expect(lost!.ended).toBeDefined();
    expect(next!.began - lost!.ended!).toBeGreaterThanOrEqual(reconnectMs - 1);
    expect(leader.session.sessions).toBe(2);
    expect(leader.lines.map((line) => line.msg)).toContain('listener database session failed');
    // Both of the lost term's sessions are closed; the new term has its own.
    expect(await backends('')).toHaveLength(1);
    expect(await backends('-market')).toHaveLength(1);
  });

  it('ends the term when its market session is lost, closing the lock session too', async () => {
    const leader = candidate();
    await until(() => leader.session.leading);
    const [lockSession] = await backends('');
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', ['hatchery-listener-market']);
    await until(() => leader.terms[0]!.ended !== undefined);
    expect(leader.lines.map((line) => line.msg)).toContain('listener market session failed');
    await until(() => leader.terms.length === 2 && leader.session.leading);
    expect(await backends('')).not.toContain(lockSession);
  });

  it('ends the term when its work calls end(), and leads again after the reconnect delay', async () => {
    const leader = candidate();
    await until(() => leader.session.leading);
    leader.terms[0]!.term.end();
    await until(() => leader.terms.length === 2);
    expect(leader.terms[1]!.began - leader.terms[0]!.ended!).toBeGreaterThanOrEqual(reconnectMs - 1);
  });

  it('keeps trying a database it cannot reach, after each reconnect delay', async () => {
    const closed = `postgres://nobody@127.0.0.1:${await freePort()}/none`;
    const unreachable = candidate(closed);
    const failures = () => unreachable.lines.filter((line) => line.msg === 'listener database session ended').length;
    await until(() => failures() >= 2);
    expect(unreachable.session.sessions).toBe(0);
    expect(unreachable.session.leading).toBe(false);
  });

  it('stops without waiting out the reconnect delay', async () => {
    const closed = `postgres://nobody@127.0.0.1:${await freePort()}/none`;
    const reconnectAfterMs = 120_000;
    const waiting = candidate(closed, { reconnectAfterMs });
    await until(() => waiting.lines.some((line) => line.msg === 'listener database session ended'));
    const stopping = performance.now();
    waiting.session.stop();
    await waiting.session.release();
    expect(performance.now() - stopping).toBeLessThan(reconnectAfterMs / 2);
  });
});
