import { describe, expect, it } from 'vitest';
import { busyMarket, runMs } from './outside-throttle';

describe('5,000 clients behind an outside throttle on the management API', () => {
  it('budget 500, 250 posts a second let through: 429s stay rare, HTTP reads almost never see one, every client ends on the final listings', async () => {
    const figures = await busyMarket({ budget: 500, throttlePerSecond: 250, quota: { perSecond: 1_000, burst: 500 } });
    // Half of what a pacer that forgot its 429s met over 30 s (137), scaled to this run's 20 s.
    expect(figures.refusedDuringRun).toBeLessThanOrEqual(Math.round((137 / 2) * (runMs / 30_000)));
    expect(figures.reads429 / figures.reads).toBeLessThan(0.01);
    expect(figures.behind).toBe(0);
    expect(figures.duplicates).toBe(0);
  }, 300_000);
});
