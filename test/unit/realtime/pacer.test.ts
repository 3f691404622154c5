import { afterEach, describe, expect, it, vi } from 'vitest';
import { budgetLimits, pacer, recovered } from '@hatchery/core/realtime/budget';
import { settlesAtOnce } from '../../support/pace';

const recovery = budgetLimits.throttleRecoveryMs;

/**
 * A deadline is wall-clock time (Date.now()), a slot the pacer's own clock: with the wall clock held still, a deadline
 * `Date.now() + 3` is 3 ms away when the pacer reads it, however long the machine took between the two.
 */
const wallClockHeld = () => vi.useFakeTimers({ toFake: ['Date'] });
afterEach(() => vi.useRealTimers());

describe('the fan-out pacer', () => {
  it('climbs back quickly to 85 % of the rate a 429 met, then six times slower to its target', () => {
    const lesson = { at: 0, from: 0.5, ceiling: 1 };
    expect(recovered(lesson, 0)).toBe(0.5);
    expect(recovered(lesson, recovery / 2)).toBeCloseTo(0.675);
    expect(recovered(lesson, recovery)).toBeCloseTo(0.85);
    expect(recovered(lesson, recovery + 3 * recovery)).toBeCloseTo(0.925);
    expect(recovered(lesson, recovery + 6 * recovery)).toBe(1);
  });

  it('halves once for the 429s of posts in flight together, and again for a 429 after the pause', () => {
    let clock = 1_000;
    const pace = pacer(400, 1, () => clock);
    for (let i = 0; i < 8; i++) pace.throttled(1_000);
    expect(pace.throttles).toBe(8);
    expect(pace.factor).toBe(0.5);
    clock += 1_000;
    const climbed = pace.factor;
    expect(climbed).toBeCloseTo(0.5 + (0.85 - 0.5) * (1_000 / recovery));
    pace.throttled(1_000);
    expect(pace.factor).toBeCloseTo(climbed / 2);
  });

  it('keeps what a 429 taught when its target changes, and learns a lower share from another pacer', () => {
    let clock = 0;
    const pace = pacer(400, 1, () => clock);
    pace.throttled();
    pace.setTarget(100);
    expect(pace.factor).toBe(0.5);
    pace.learn(0.2);
    expect(pace.factor).toBeCloseTo(0.2);
    pace.learn(0.9);
    expect(pace.factor).toBeCloseTo(0.2);
    clock += recovery * 8;
    expect(pace.factor).toBe(1);
  });

  it('without a budget, halves the rate its posts went at over the moments before a 429, however short', async () => {
    let clock = 0;
    const pace = pacer(0, 1, () => clock);
    wallClockHeld();
    // 50 posts in 50 ms: 500 a second at least (a rate is measured over 100 ms at the shortest), not 50.
    for (let i = 0; i < 50; i++, clock++) expect(await pace.take()).toBe(true);
    pace.throttled(0);
    expect(await pace.take()).toBe(true);
    // Halved to 250 a second: the next slot is 4 ms away.
    expect(await pace.take(Date.now() + 3)).toBe(false);
    expect(await pace.take(Date.now() + 20)).toBe(true);
  });

  it('keeps to the lower of its target and the rate a 429 allowed, whichever changed', async () => {
    const clock = 0;
    const pace = pacer(400, 1, () => clock);
    wallClockHeld();
    pace.throttled(0);
    // A 429 at 400 a second allows 200; a target of 100 is not slowed further: its slots are 10 ms apart.
    pace.setTarget(100);
    expect(await pace.take()).toBe(true);
    expect(await pace.take(Date.now() + 8)).toBe(false);
    expect(await pace.take(Date.now() + 15)).toBe(true);
  });

  it('without a budget, learns nothing from another pacer: it has no share to reduce', async () => {
    const clock = 0;
    const pace = pacer(0, 1, () => clock);
    wallClockHeld();
    pace.learn(0.2);
    expect(pace.factor).toBe(1);
    expect(await pace.take()).toBe(true);
    expect(await pace.take(Date.now() + 1)).toBe(true);
  });

  it('refuses at once, taking no slot, a post whose slot comes after the deadline', async () => {
    const pace = pacer(2);
    expect(await pace.take(Date.now() + 10_000)).toBe(true);
    // Its slot is 500 ms away: refused without waiting on a timer, rather than at the deadline or at the slot.
    const refused = pace.take(Date.now() + 100);
    expect(await settlesAtOnce(refused)).toBe(true);
    expect(await refused).toBe(false);
    expect(await pace.take(Date.now() + 10_000)).toBe(true);
  });

  it('holds posts for a 429’s pause only when the pause ends before the deadline', async () => {
    const pace = pacer(0);
    pace.throttled(500);
    const asked = performance.now();
    const refused = pace.take(Date.now() + 200);
    expect(await settlesAtOnce(refused)).toBe(true);
    expect(await refused).toBe(false);
    expect(await pace.take(Date.now() + 2_000)).toBe(true);
    expect(performance.now() - asked).toBeGreaterThanOrEqual(450);
  });

  it('spaces the posts a 429 held at the rate it left when the pause ends, rather than letting them all go at once', async () => {
    // 200 a second: 40 posts queued take slots 5 ms apart; a 429 with Retry-After 100 ms comes back for the fifth. It
    // comes with the fifth's release rather than at a time, so the 35 held are 35 however late the timers run.
    const pace = pacer(200);
    const started = performance.now();
    const released: number[] = [];
    let throttledAt = Number.POSITIVE_INFINITY;
    const posts = Array.from({ length: 40 }, () =>
      pace.take().then((sent) => {
        if (!sent) return;
        released.push(performance.now() - started);
        if (released.length === 5) {
          throttledAt = performance.now() - started;
          pace.throttled(100);
        }
      }),
    );
    await Promise.all(posts);
    const afterPause = released.filter((at) => at >= throttledAt + 100).sort((a, b) => a - b);
    expect(released).toHaveLength(40);
    expect(afterPause.length).toBeGreaterThan(30);
    // Halved to 100 a second: 10 ms apart, so the last leaves no sooner than its slot, (n − 1) × 10 ms after the pause
    // ends (all at once, they would leave as it ends). Measured from the pause's end, which is fixed, and against the
    // last post, which a late timer only makes later: a busy machine cannot pass a pacer that bunches them.
    const pauseEnds = throttledAt + 100;
    expect(afterPause.at(-1)! - pauseEnds).toBeGreaterThanOrEqual((afterPause.length - 1) * 10 - 5);
  });
});
