import { describe, expect, it } from 'vitest';
import { accountQuota } from '@hatchery/local/gateway/quota';

describe("the local account quota's per-second counts", () => {
  it('counts each whole second and keeps only the last hour of them', () => {
    let now = 0;
    const quota = accountQuota(undefined, () => now);
    const secondAt = (at: number) => Math.floor((performance.timeOrigin + at) / 1000);
    quota.take('http');
    quota.take('http');
    const first = secondAt(0);
    expect(quota.perSecond('http').get(first)).toBe(2);
    for (let second = 1; second <= 4000; second++) {
      now = second * 1000;
      quota.take('http');
    }
    const kept = quota.perSecond('http');
    expect(kept.size).toBeLessThanOrEqual(3600);
    expect(kept.has(first)).toBe(false);
    expect(kept.get(secondAt(now))).toBe(1);
    expect(quota.perSecond('management').size).toBe(0);
    expect(quota.stats().allowed.http).toBe(4002);
  });
});
