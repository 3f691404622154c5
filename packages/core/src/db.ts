import pg from 'pg';
import { databaseSettings } from '@hatchery/platform/config/database';
import { isDatabaseUnavailable } from './errors';
import { logger } from '@hatchery/platform/telemetry/logger';
import { recordDatabaseRetry, recordDatabaseTime } from '@hatchery/platform/telemetry/metrics';
import { traced } from '@hatchery/platform/telemetry/tracing';

/**
 * Bounds on every database round trip, so that a database that accepts
 * connections but never answers costs a request `unavailableWithinMs` at
 * most, then a 503: well inside the HTTP functions' 15 s timeout.
 */
export const databaseLimits = {
  connectTimeoutMs: 1_500,
  /** Server side: a statement still running after this is cancelled by PostgreSQL itself (57014). */
  statementTimeoutMs: 2_000,
  /** Client side, above the statement timeout: catches a server that cannot even cancel (frozen, or a dead network path); see boundedStatement. */
  queryTimeoutMs: 2_500,
  /** A retry starts only if it can end within this much of the first attempt's start. */
  unavailableWithinMs: 5_000,
  transientRetries: 3,
  transientMaxDelayMs: 5_000,
} as const;

let pool: pg.Pool | undefined;

/** The process's one pool, created on first use from the configuration. */
export function db(): pg.Pool {
  if (!pool) {
    const { DATABASE_URL, DATABASE_POOL_MAX, DATABASE_SSL } = databaseSettings();
    pool = new pg.Pool({
      connectionString: DATABASE_URL,
      max: DATABASE_POOL_MAX,
      ssl: DATABASE_SSL ? { rejectUnauthorized: true } : undefined,
      connectionTimeoutMillis: databaseLimits.connectTimeoutMs,
      statement_timeout: databaseLimits.statementTimeoutMs,
      idleTimeoutMillis: 30_000,
    });
    // An idle client losing its server must not crash the process; the next query reconnects.
    pool.on('error', (error) => logger().warn({ err: error.message }, 'idle database client failed'));
    // Nor may a checked-out one: an 'error' event nobody listens for ends the process, and one can come in the same read
    // that frees the client. Its pending statement fails with the same failure, which its caller handles.
    pool.on('connect', (client) => client.on('error', ignoreLostConnection));
  }
  return pool;
}

export async function closeDb(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.end();
}

const retryableCodes = new Set(['40001', '40P01']);

/** Failures worth another try: the server was unreachable, restarting, saturated, or aborted us for a conflict. */
export function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return isDatabaseUnavailable(error) || (typeof code === 'string' && retryableCodes.has(code));
}

export function isMissingRelation(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === '42P01' || code === '3F000';
}

export function isUndefinedColumn(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === '42703';
}

export function retryDelayMs(attempt: number): number {
  return Math.min(databaseLimits.transientMaxDelayMs, 100 * 2 ** attempt);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The longest one attempt can take against a database that never answers: a connection, then the statement that hangs. */
export const attemptBoundMs = databaseLimits.connectTimeoutMs + databaseLimits.queryTimeoutMs;

/** Whether another attempt, started after `delayMs`, would still end within `unavailableWithinMs` of the first one's start. */
function retryFits(elapsedMs: number, delayMs: number): boolean {
  return elapsedMs + delayMs + attemptBoundMs <= databaseLimits.unavailableWithinMs;
}

/**
 * Runs a unit of work, repeating it on transient failures (SPEC: up to 3
 * retries, at most 5 s apart) while a retry can still end in time: quick
 * failures (a restart, a dropped connection) are retried, a database that
 * times out is reported unavailable at once.
 */
export function withRetry<T>(work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const record = () => recordDatabaseTime(performance.now() - started);
  // The first attempt, which almost always succeeds, continues as it is; only its failure enters the retry loop.
  return attempt(work).then(
    (value) => {
      record();
      return value;
    },
    (error: unknown) => retried(work, error, started).finally(record),
  );
}

/** One attempt, a throw of `work` itself a rejection like any other failure. */
function attempt<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The attempts after a failed first one, while the failure is transient and a retry can still end in time. */
async function retried<T>(work: () => Promise<T>, firstFailure: unknown, started: number): Promise<T> {
  let failure = firstFailure;
  for (let retry = 0; ; retry++) {
    if (retry >= databaseLimits.transientRetries || !isTransient(failure)) throw failure;
    if (!retryFits(performance.now() - started, retryDelayMs(retry))) throw failure;
    logger().warn({ attempt: retry + 1, code: (failure as { code?: string }).code }, 'transient database failure, retrying');
    recordDatabaseRetry();
    await sleep(retryDelayMs(retry));
    try {
      return await work();
    } catch (error) {
      failure = error;
    }
  }
}

export type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * One statement on a checked-out client, `done` called once: with pg's
 * answer, or with pg's own "Query read timeout" when the server has not
 * answered within queryTimeoutMs (the caller then releases the client as
 * broken). This is pg's `query_timeout`, kept here rather than set on the
 * pool, and the statement is handed its callback rather than asked for a
 * promise: either of pg's own (the timeout's wrapper, the promise's executor)
 * is a closure made inside `Client.query`, and with one V8 pretenures what the
 * reads allocate, so every row's values reach the old generation
 * (docs/benchmarks.md, throughput).
 */
function boundedQuery<Row extends pg.QueryResultRow>(
  client: pg.PoolClient,
  config: pg.QueryConfig | pg.QueryArrayConfig,
  done: (failure: Error | undefined, result?: pg.QueryResult<Row>) => void,
): void {
  let settled = false;
  const settle = (failure: Error | undefined, result?: pg.QueryResult<Row>) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    done(failure, result);
  };
  const timer = setTimeout(() => settle(new Error('Query read timeout')), databaseLimits.queryTimeoutMs);
  // pg's types take the two row modes apart; the rows' shape is the caller's to state.
  // biome-ignore lint/nursery/noFloatingPromises: with a callback, pg's query returns nothing (Biome picks the promise overload).
  client.query<Row>(config as pg.QueryConfig, (failure: Error | undefined, result: pg.QueryResult<Row>) => settle(failure ?? undefined, result));
}

/** A boundedQuery as a promise. */
function boundedStatement<Row extends pg.QueryResultRow>(client: pg.PoolClient, config: pg.QueryConfig): Promise<pg.QueryResult<Row>> {
  return new Promise((resolve, reject) => boundedQuery<Row>(client, config, (failure, result) => (failure ? reject(failure) : resolve(result!))));
}

/** A checked-out client whose every statement is a boundedStatement. */
function bounded(client: pg.PoolClient): Queryable {
  const run = (text: string | pg.QueryConfig, values?: unknown[]) => boundedStatement(client, typeof text === 'string' ? { text, values } : text);
  // pg's overloads (config or text, callback or promise) are more than the service calls: text and values, or a config, for a promise.
  return { query: run as Queryable['query'] };
}

/** A client's lost connection, listened for all its life (see db). */
function ignoreLostConnection(): void {}

/** A client of the pool handed to `use` once the pool has one, or the pool's failure to `fail`. */
function withPoolClient(use: (client: pg.PoolClient) => void, fail: (error: Error) => void): void {
  db().connect((error, client) => {
    if (error || !client) return fail(error ?? new Error('The pool handed over no client.'));
    use(client);
  });
}

/** A client of the pool, for a transaction's statements. */
function checkOut(): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => withPoolClient(resolve, reject));
}

/**
 * One statement on a client of the pool, a boundedQuery; a client whose
 * statement failed is destroyed rather than reused, as pg's pool.query does.
 * One promise, its steps the pool's and the client's callbacks: a read takes
 * no more turns than it has round trips.
 */
function poolStatement<Row extends pg.QueryResultRow, T>(config: pg.QueryConfig | pg.QueryArrayConfig, answer: (result: pg.QueryResult<Row>) => T): Promise<T> {
  return new Promise((resolve, reject) =>
    withPoolClient((client) => {
      boundedQuery<Row>(client, config, (failure, result) => {
        client.release(failure);
        if (failure) reject(failure);
        else resolve(answer(result!));
      });
    }, reject),
  );
}

const rowsOf = <Row extends pg.QueryResultRow>(result: pg.QueryResult<Row>): Row[] => result.rows;

/**
 * The pool as a Queryable, for a reader written against one: each statement a poolStatement, not retried (wrap the
 * read in withRetry where a retry is wanted). Never pg's own pool.query, which waits on a frozen server forever.
 */
export const pooled: Queryable = {
  query: ((text: string | pg.QueryConfig, values?: unknown[]) =>
    poolStatement(typeof text === 'string' ? { text, values } : text, (result) => result)) as Queryable['query'],
};

/** One parameterized statement, retried on transient failures. */
export async function query<Row extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<Row[]> {
  return withRetry(() => traced('postgres query', () => poolStatement<Row, Row[]>({ text, values }, rowsOf)));
}

/** One parameterized statement, retried on transient failures, its rows as arrays of their values in select order: no object per row for a reader that builds its own. */
export async function queryValues(text: string, values: unknown[] = []): Promise<unknown[][]> {
  return withRetry(() => traced('postgres query', () => poolStatement<unknown[], unknown[][]>({ text, values, rowMode: 'array' }, rowsOf)));
}

/** A transaction, retried as a whole on transient failures (including serialization failures). */
export async function transaction<T>(work: (client: Queryable) => Promise<T>): Promise<T> {
  return withRetry(() =>
    traced('postgres transaction', async () => {
      const client = await checkOut();
      const session = bounded(client);
      let broken = false;
      try {
        await session.query('BEGIN');
        const result = await work(session);
        await session.query('COMMIT');
        return result;
      } catch (error) {
        broken = isDatabaseUnavailable(error);
        if (!broken) await session.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        // A client whose connection failed is destroyed rather than returned to the pool.
        client.release(broken);
      }
    }),
  );
}
