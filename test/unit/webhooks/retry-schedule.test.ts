import { describe, expect, it } from 'vitest';
import { isExpired, longestRetryDelayMs, nextAttemptDelayMs } from '@hatchery/core/webhooks/retry-schedule';

const least = () => 0;
const most = () => 1 - Number.EPSILON;

describe('the retry schedule', () => {
  it('waits 5 s doubling at each attempt, jittered between half of that and all of it', () => {
    expect(nextAttemptDelayMs({ attempt: 1, random: least })).toBe(2_500);
    expect(nextAttemptDelayMs({ attempt: 1, random: most })).toBe(5_000);
    expect(nextAttemptDelayMs({ attempt: 2, random: least })).toBe(5_000);
    expect(nextAttemptDelayMs({ attempt: 4, random: most })).toBe(40_000);
    expect(nextAttemptDelayMs({ attempt: 4, random: () => 0.5 })).toBe(30_000);
  });

  it('keeps every delay within its bounds with Math.random', () => {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const ceiling = Math.min(longestRetryDelayMs, 5_000 * 2 ** (attempt - 1));
      for (let i = 0; i < 50; i++) {
        const delay = nextAttemptDelayMs({ attempt });
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it('waits an hour at most, however many attempts failed', () => {
    expect(longestRetryDelayMs).toBe(3_600_000);
    expect(nextAttemptDelayMs({ attempt: 11, random: most })).toBe(longestRetryDelayMs);
    expect(nextAttemptDelayMs({ attempt: 5_000, random: most })).toBe(longestRetryDelayMs);
    expect(nextAttemptDelayMs({ attempt: 5_000, random: least })).toBe(longestRetryDelayMs / 2);
  });

  it('never returns sooner than a Retry-After, and keeps a longer backoff', () => {
    expect(nextAttemptDelayMs({ attempt: 1, retryAfterMs: 60_000, random: most })).toBe(60_000);
    expect(nextAttemptDelayMs({ attempt: 8, retryAfterMs: 1_000, random: least })).toBe(320_000);
    expect(nextAttemptDelayMs({ attempt: 1, retryAfterMs: undefined, random: least })).toBe(2_500);
  });

  it('expires a delivery once its retry window, 24 h by default, has passed since its first attempt', () => {
    const firstAttemptAt = new Date('2030-01-01T00:00:00Z');
    const later = (ms: number) => new Date(firstAttemptAt.getTime() + ms);
    expect(isExpired({ firstAttemptAt, now: later(24 * 3_600_000 - 1) })).toBe(false);
    expect(isExpired({ firstAttemptAt, now: later(24 * 3_600_000) })).toBe(true);
    expect(isExpired({ firstAttemptAt, now: later(59_999), retryWindowMs: 60_000 })).toBe(false);
    expect(isExpired({ firstAttemptAt, now: later(60_000), retryWindowMs: 60_000 })).toBe(true);
  });
});
