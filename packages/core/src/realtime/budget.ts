import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterMs } from '@hatchery/platform/aws/throttling';
import { limits } from '../limits';

/**
 * The fan-out budget (docs/deploying.md, "The fan-out budget"): every post,
 * the listener's and every shard's, spends API Gateway's throttle per account
 * and Region, which HTTP requests and hub messages spend too. So all posts
 * together keep to a rate, split between targeted events (forgeFulfilled),
 * which have a share of their own and never wait behind a broadcast, and
 * broadcasts, whose share is divided among the shards posting at once.
 */
export interface FanOutBudget {
  /** Posts a second for all posts together; 0 means no budget (posts go as fast as they can). */
  postsPerSecond: number;
  /** The least time between the starts of two broadcasts: the cost ceiling a platform team sets. */
  minIntervalMs: number;
}

export interface BudgetShares {
  /** For broadcasts (marketChanged), divided among the shards posting at once. */
  broadcast: number;
  /** For targeted events (forgeFulfilled), theirs alone. */
  targeted: number;
}

/** The budget's two shares; undefined when there is no budget. */
export function budgetShares({ postsPerSecond }: FanOutBudget): BudgetShares | undefined {
  if (postsPerSecond <= 0) return undefined;
  const targeted = postsPerSecond * limits.hub.targetedShare;
  return { broadcast: postsPerSecond - targeted, targeted };
}

/**
 * When the next broadcast may start: not before the last one's audience has
 * had the broadcast share's time (so broadcasts never overlap and together
 * stay within it), nor before the minimum interval.
 */
export function nextBroadcastAt(startedAt: number, audience: number, budget: FanOutBudget): number {
  const broadcast = budgetShares(budget)?.broadcast;
  const carried = broadcast ? (audience / broadcast) * 1000 : 0;
  return startedAt + Math.max(budget.minIntervalMs, carried);
}

export interface Pacer {
  /** Resolves when the next post may go. */
  take(): Promise<void>;
  /** A post was answered 429: nothing goes before `Retry-After` (or a pause of its own), and the rate halves, then recovers. */
  throttled(error: unknown): void;
  /** 429s seen. */
  readonly throttles: number;
}

/** No budget: every post goes at once. */
export const unpaced: Pacer = { take: async () => undefined, throttled: () => undefined, throttles: 0 };

/**
 * Spaces posts at `postsPerSecond`, letting `burst` of them through at once
 * after a quiet spell. A 429 pauses every post of this pacer (for
 * `Retry-After` when the answer gave one) and halves the rate, which then
 * climbs back to `postsPerSecond` over `limits.hub.throttleRecoveryMs`: the
 * budget is shared with traffic it cannot see, so a 429 says the share left to
 * it is smaller than it thought.
 */
export function pacer(postsPerSecond: number, burst = 1, now: () => number = () => performance.now()): Pacer {
  if (!(postsPerSecond > 0) || !Number.isFinite(postsPerSecond)) return unpaced;
  const floor = postsPerSecond / 16;
  /** The slot of the next post; a past slot means unspent tokens, up to `burst` (all of them at first). */
  let nextAt = -Infinity;
  let pausedUntil = 0;
  let throttledRate = postsPerSecond;
  let throttledAt = -Infinity;
  let throttles = 0;
  const rate = (at: number) => Math.min(postsPerSecond, throttledRate + ((at - throttledAt) / limits.hub.throttleRecoveryMs) * postsPerSecond);
  return {
    async take() {
      const at = now();
      const interval = 1000 / rate(at);
      const slot = Math.max(nextAt, at - (burst - 1) * interval, pausedUntil);
      nextAt = slot + interval;
      if (slot > at) await sleep(slot - at);
      // A 429 while this post waited for its slot holds it too.
      while (pausedUntil > now()) await sleep(pausedUntil - now());
    },
    throttled(error) {
      throttles++;
      const at = now();
      throttledRate = Math.max(floor, rate(at) / 2);
      throttledAt = at;
      pausedUntil = Math.max(pausedUntil, at + (retryAfterMs(error) ?? limits.hub.throttlePauseMs));
    },
    get throttles() {
      return throttles;
    },
  };
}
