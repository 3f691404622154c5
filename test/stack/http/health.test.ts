import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../accounts/support';
import { startTestStack, type TestStack } from '../../support/stack';
import { unavailableRetryAfterSeconds } from '@hatchery/core/errors';
import { healthTimeoutMs } from '@hatchery/core/health-check';

/** GET /health through the local gateway, with the per-IP limit on (1 a second, a burst of 2). */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: { IP_RATE_LIMIT_PER_SECOND: '1' } });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('GET /health', () => {
  it('answers 200 with the database reachable, public, and never rate limited while other routes are', async () => {
    const replies = [];
    for (let i = 0; i < 10; i++) replies.push(await call(stack, 'GET', '/health'));
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('etag')).toBeNull();
      expect(reply.body).toEqual({ status: 'ok', database: 'ok', indexer: 'unknown' });
    }
    const others = [];
    for (let i = 0; i < 4; i++) others.push((await call(stack, 'GET', '/editions')).status);
    expect(others).toContain(429);
    expect((await call(stack, 'GET', '/health')).status).toBe(200);
  });

  it('answers 503 problem+json while the database is down, and 200 again once it is back', async () => {
    await stack.postgres!.stop();
    try {
      const reply = await call(stack, 'GET', '/health');
      expect(reply.status).toBe(503);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('retry-after')).toBe(String(unavailableRetryAfterSeconds));
      expect(reply.problem).toEqual({
        title: 'Service unavailable',
        status: 503,
        detail: `The database did not answer within ${healthTimeoutMs} ms.`,
        instance: '/health',
      });
    } finally {
      await stack.postgres!.start();
    }
    let reply = await call(stack, 'GET', '/health');
    for (let attempt = 0; reply.status !== 200 && attempt < 50; attempt++) reply = await call(stack, 'GET', '/health');
    expect(reply.status).toBe(200);
  });
});
