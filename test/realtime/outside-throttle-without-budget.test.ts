import { describe, expect, it } from 'vitest';
import { busyMarket } from './outside-throttle';

describe('5,000 clients behind an outside throttle on the management API', () => {
  it('budget off, 1,000 posts a second let through: every client ends on the final listings, none gets a frame twice', async () => {
    const figures = await busyMarket({ budget: 0, throttlePerSecond: 1_000 });
    expect(figures.refusedDuringRun, 'the throttle refused posts').toBeGreaterThan(0);
    expect(figures.behind).toBe(0);
    expect(figures.duplicates).toBe(0);
  }, 300_000);
});
