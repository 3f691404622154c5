import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, freshCaller, type Reply } from '../accounts/support';
import { report, slackMs, slowestOf, watchLag } from '../../support/pace';
import { startTestStack, type TestStack } from '../../support/stack';
import { databaseLimits } from '@hatchery/core/db';
import { unavailableRetryAfterSeconds } from '@hatchery/core/errors';

/**
 * A database that accepts connections but never answers: the test cluster's
 * processes frozen with SIGSTOP. Its listen socket still completes TCP
 * handshakes, so connecting "succeeds" and then nothing comes back, which is
 * what the pool's bounds must turn into a 503 within seconds.
 */
let stack: TestStack;
let postmaster: number;
/** What freeze() stopped. */
let frozen: number[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  const [row] = await stack.sql<{ setting: string }>(`SELECT setting FROM pg_settings WHERE name = 'data_directory'`);
  postmaster = Number(readFileSync(join(row!.setting, 'postmaster.pid'), 'utf8').split('\n')[0]);
});
afterAll(async () => {
  thaw();
  await stack?.stop();
});

/** Processes whose parent is `pid`, from /proc (field 4 of stat, after the parenthesised command name). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return children;
}

/** The postmaster first, so that it forks no new backend; then every process it had forked, the service's backends among them. */
function freeze(): void {
  process.kill(postmaster, 'SIGSTOP');
  frozen = [postmaster, ...childrenOf(postmaster)];
  for (const pid of frozen.slice(1)) process.kill(pid, 'SIGSTOP');
}

function thaw(): void {
  for (const pid of frozen.splice(0)) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Already gone.
    }
  }
}

/** How long a request took to be answered. */
async function answered(request: () => Promise<Reply<unknown>>): Promise<{ reply: Reply<unknown>; ms: number }> {
  const started = performance.now();
  const reply = await request();
  return { reply, ms: Math.round(performance.now() - started) };
}

const address = `0x${'ab'.repeat(20)}`;
/** Only ends a request or a recovery that hangs: six times the design bound, databaseLimits.unavailableWithinMs. */
const hungAfterMs = 6 * databaseLimits.unavailableWithinMs;

describe('a frozen database', () => {
  it('answers 503 problem+json with Retry-After within seconds on protected and public endpoints, loses nothing, and recovers by itself', async () => {
    const caller = freshCaller('frozen');
    const api = await client(stack, caller);
    expect((await api.me()).status).toBe(200);
    const challenge = await api.nonce();
    expect(challenge.status).toBe(200);
    // Warm the pool, so the first round meets idle connections to the frozen server and the second must open new ones.
    await Promise.all(Array.from({ length: 4 }, () => api.me()));
    // A request the database answers, as this machine takes it now: the bound allows for it (support/pace.ts).
    const roundTripMs = await slowestOf(() => api.me());

    // Aborted well after the bound, so that a hang fails here rather than at the test's timeout.
    const get = (path: string) => async (): Promise<Reply> => {
      const response = await fetch(`${stack.url}${path}`, { signal: AbortSignal.timeout(hungAfterMs) });
      return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown>, problem: undefined as never };
    };
    const requests: Record<string, () => Promise<Reply<unknown>>> = {
      'GET /accounts/me': () => api.me(),
      'POST /accounts/me/wallet/nonce': () => api.nonce(),
      'GET /editions': get('/editions'),
      'GET /transparency/summary': get('/transparency/summary'),
      [`GET /accounts/{address}/nfts`]: get(`/accounts/${address}/nfts`),
      'GET /health': get('/health'),
    };

    const figures: string[] = [];
    freeze();
    try {
      for (const round of ['idle connections', 'new connections']) {
        const lag = watchLag();
        const results = await Promise.all(
          Object.entries(requests).map(async ([name, request]) => {
            const outcome = await answered(request).catch((error: unknown) => {
              throw new Error(`${name} (${round}) had no answer within ${hungAfterMs} ms`, { cause: error });
            });
            return { name, ...outcome };
          }),
        );
        const boundMs = databaseLimits.unavailableWithinMs + slackMs({ lagMs: lag.stop(), roundTripMs });
        for (const { name, reply, ms } of results) {
          expect(reply.status, `${name} (${round})`).toBe(503);
          expect(reply.headers.get('content-type')).toBe('application/problem+json');
          expect(reply.headers.get('retry-after')).toBe(String(unavailableRetryAfterSeconds));
          expect(reply.headers.get('cache-control')).toBe('no-store');
          expect(reply.body).toMatchObject({ status: 503, title: 'Service unavailable' });
          expect(JSON.stringify(reply.body)).not.toMatch(/timeout|SELECT|127\.0\.0\.1|at .*\.ts/i);
          expect(ms, `${name} (${round}) took ${ms} ms, beyond ${Math.round(boundMs)}`).toBeLessThan(boundMs);
        }
        figures.push(`${round}: ${results.map(({ name, ms }) => `${name} ${ms} ms`).join(', ')} (bound ${Math.round(boundMs)} ms)`);
      }
    } finally {
      thaw();
    }
    report(`503 with a frozen database: ${figures.join('; ')}`);

    // Recovers by itself, with what was stored before the freeze.
    const recoveredBy = Date.now() + hungAfterMs;
    let me = await api.me();
    while (me.status !== 200 && Date.now() < recoveredBy) me = await api.me();
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(caller.uid);
    const again = await api.nonce();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(challenge.body);
  }, 120_000);
});
