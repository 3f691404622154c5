import { setTimeout as sleep } from 'node:timers/promises';
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
  /**
   * Resolves true when the next post may go; false at once, taking no slot,
   * when that slot (or a 429's pause) would come at or after `stopAt` (epoch
   * ms), so a post that cannot go in time never waits for nothing.
   */
  take(stopAt?: number): Promise<boolean>;
  /** A post was answered 429: nothing goes before `retryAfterMs` (or a pause of its own), and the rate halves, then recovers. */
  throttled(retryAfterMs?: number): void;
  /** The rate this pacer aims at (Infinity: no budget); what a 429 taught is kept across a change of it. */
  setTarget(postsPerSecond: number): void;
  /** What a 429 left of the target, from 1/16 to 1: a shard's pacer tells the listener's, which gives the next shards less. */
  readonly factor: number;
  /** Learns a factor another pacer was taught (a shard's), if lower than its own. */
  learn(factor: number): void;
  /** 429s seen. */
  readonly throttles: number;
}

/** The lowest share of its target a pacer falls to, however many 429s. */
const floorFactor = 1 / 16;

/**
 * Spaces posts at `postsPerSecond` (Infinity: as fast as they come, a
 * fan-out without a budget), letting `burst` of them through at once after a
 * quiet spell. A 429 pauses every post of this pacer (for `Retry-After` when
 * the answer gave one) and halves the rate, which then climbs back to the
 * target over `limits.hub.throttleRecoveryMs`: the quota is shared with
 * traffic the pacer cannot see, so a 429 says the share left to it is smaller
 * than it thought. Without a budget, the rate a 429 halves is the one the
 * posts were going at (over the last second). One pacer serves every post of
 * a lane for the life of its process, so what a 429 taught outlasts the shard
 * or broadcast that met it.
 */
export function pacer(postsPerSecond: number, burst = 1, now: () => number = () => performance.now()): Pacer {
  let target = postsPerSecond > 0 ? postsPerSecond : Number.POSITIVE_INFINITY;
  /** The slot of the next post; a past slot means unspent tokens, up to `burst` (all of them at first). */
  let nextAt = Number.NEGATIVE_INFINITY;
  let pausedUntil = 0;
  /** The rate a 429 left, and the rate it climbs back by over the recovery time. */
  let throttled: { at: number; rate: number; base: number } | undefined;
  let throttles = 0;
  /** When the posts of the last second went: an unbudgeted pacer's measure of the rate a 429 refused. */
  const recent: number[] = [];
  const climbed = (at: number, { rate, base }: { rate: number; base: number }, since: number) => rate + ((at - since) / limits.hub.throttleRecoveryMs) * base;
  const rate = (at: number) => {
    if (throttled && climbed(at, throttled, throttled.at) >= throttled.base) throttled = undefined;
    return throttled ? Math.min(target, climbed(at, throttled, throttled.at)) : target;
  };
  const factorAt = (at: number) => (throttled ? Math.min(1, rate(at) / throttled.base) : 1);
  const slow = (at: number, factor: number) => {
    const base = Number.isFinite(target) ? target : throttled ? throttled.base : Math.max(1, recent.filter((t) => t > at - 1000).length);
    throttled = { at, rate: Math.max(base * floorFactor, base * factor), base };
  };
  return {
    async take(stopAt = Number.POSITIVE_INFINITY) {
      const at = now();
      const remaining = stopAt - Date.now();
      const current = rate(at);
      const interval = Number.isFinite(current) ? 1000 / current : 0;
      const slot = Math.max(nextAt, at - (burst - 1) * interval, pausedUntil);
      if (slot - at >= remaining) return false;
      nextAt = slot + interval;
      if (!Number.isFinite(target) && !throttled) {
        recent.push(at);
        while (recent.length && recent[0]! <= at - 1000) recent.shift();
      }
      if (slot > at) await sleep(slot - at);
      // A 429 while this post waited for its slot holds it too, unless the pause outlasts the deadline.
      while (pausedUntil > now()) {
        if (pausedUntil - now() >= stopAt - Date.now()) return false;
        await sleep(pausedUntil - now());
      }
      return true;
    },
    throttled(retryAfterMs) {
      throttles++;
      const at = now();
      slow(at, factorAt(at) / 2);
      pausedUntil = Math.max(pausedUntil, at + (retryAfterMs ?? limits.hub.throttlePauseMs));
    },
    setTarget(next) {
      const at = now();
      const factor = factorAt(at);
      target = next > 0 ? next : Number.POSITIVE_INFINITY;
      if (throttled && Number.isFinite(target)) slow(at, factor);
    },
    get factor() {
      return factorAt(now());
    },
    learn(factor) {
      const at = now();
      if (factor < factorAt(at)) slow(at, factor);
    },
    get throttles() {
      return throttles;
    },
  };
}
