import { describe, expect, it } from 'vitest';
import { deliveryLimits, endpointHealth, nextStep, type DeliveryJob } from '@hatchery/core/webhooks/delivery';

const job: DeliveryJob = {
  event: {
    id: 'evt_7',
    position: 7,
    type: 'forge.fulfilled',
    chainId: 31337,
    blockNumber: '12',
    entity: '3',
    wallets: [],
    createdAt: '2026-01-01T00:00:00.000Z',
    payload: {},
  },
  firstAttemptAt: '2026-01-01T00:00:00.000Z',
  failures: 0,
};
const hour = 3_600_000;
const at = (ms: number) => new Date(Date.parse(job.firstAttemptAt) + ms);
const highest = () => 0.999_999;

describe('after a webhook attempt', () => {
  it('is done on a 2xx, and nothing else', () => {
    expect(nextStep(job, { kind: 'delivered', status: 204 }, at(0), 24 * hour)).toEqual({ kind: 'done' });
  });

  it('tries again whatever went wrong, counting the failure and keeping its reason, after the backoff or a longer Retry-After', () => {
    for (const outcome of [
      { kind: 'refused', status: 500, reason: 'HTTP 500 Internal Server Error' },
      { kind: 'unknown', reason: 'timed out after sending' },
      { kind: 'unsent', reason: 'connect ECONNREFUSED' },
    ] as const) {
      const step = nextStep(job, outcome, at(0), 24 * hour, highest);
      expect(step).toMatchObject({ kind: 'retry', job: { failures: 1, lastFailure: outcome.reason, event: job.event, firstAttemptAt: job.firstAttemptAt } });
    }
    const throttled = nextStep(job, { kind: 'refused', status: 429, retryAfterMs: 600_000, reason: 'HTTP 429' }, at(0), 24 * hour, highest);
    expect(throttled).toMatchObject({ kind: 'retry', delayMs: 600_000 });
  });

  it('dead-letters a delivery whose next attempt would fall past its retry window', () => {
    const late = { ...job, failures: 20 };
    expect(nextStep(late, { kind: 'unknown', reason: 'reset' }, at(24 * hour - 60_000), 24 * hour, highest)).toMatchObject({
      kind: 'dead',
      job: { failures: 21 },
    });
    expect(nextStep(late, { kind: 'unknown', reason: 'reset' }, at(hour), 24 * hour, highest)).toMatchObject({ kind: 'retry' });
  });
});

describe('a delivery’s bounds', () => {
  it('give a job held by a task that died to another only once its attempt must have ended, and connect within the attempt', () => {
    expect(deliveryLimits.connectTimeoutMs).toBeLessThan(deliveryLimits.timeoutMs);
    expect(deliveryLimits.expireInSeconds * 1000).toBeGreaterThanOrEqual(2 * deliveryLimits.timeoutMs);
    // A down endpoint's batch waits, then attempts: all of it before the jobs expire and another task takes them.
    expect(deliveryLimits.downPauseMs + deliveryLimits.timeoutMs).toBeLessThan(deliveryLimits.expireInSeconds * 1000);
  });
});

describe('an endpoint’s workers', () => {
  it('take whole batches: the attempts in flight are a whole number of them', () => {
    expect(deliveryLimits.concurrency % deliveryLimits.batch).toBe(0);
    expect(deliveryLimits.batch).toBeGreaterThan(1);
  });
});

describe('an endpoint’s health', () => {
  it('counts it down after batches in a row delivered nothing, pausing each batch then, and up again at its first delivery', () => {
    const health = endpointHealth();
    for (let batch = 0; batch < deliveryLimits.downAfterBatches; batch++) {
      expect(health.pauseMs()).toBe(0);
      health.settled(false);
    }
    expect(health.pauseMs()).toBe(deliveryLimits.downPauseMs);
    health.settled(true);
    expect(health.pauseMs()).toBe(0);
  });
});
