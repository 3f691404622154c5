import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The fan-out budget (docs/deploying.md, "The fan-out budget"): every post,
 * the listener's and every shard's, spends API Gateway's throttle per account
 * and Region, which HTTP requests and hub messages spend too. So all posts
 * together keep to a rate, split between targeted events (forgeFulfilled),
 * which have a share of their own and never wait behind a broadcast, and
 * broadcasts, whose share is divided among the shards posting at once.
 */
export const budgetLimits = {
  /**
   * The share of the fan-out budget kept for targeted events (forgeFulfilled), so they never wait behind a
   * broadcast: a tenth, since a group is a buyer's few tabs while a broadcast is every connection.
   */
  targetedShare: 0.1,
  /**
   * After a 429 without Retry-After, how long a lane stops posting: long enough for the posts in flight to come back,
   * so their 429s count as one. Under a budget, a 429 says others spend the quota's share the budget counted on, so
   * the lane lets the quota's burst fill back; without one, its own posts emptied it, and speed is what was asked.
   */
  throttlePauseMs: { budgeted: 1_000, unbudgeted: 250 },
  /** After a 429 the posting rate halves, then climbs back to its share of the budget over this long. */
  throttleRecoveryMs: 10_000,
} as const;

export interface FanOutBudget {
  /** Posts a second for all posts together; 0 means no budget (posts go as fast as they can). */
  postsPerSecond: number;
  /** The least time between the starts of two broadcasts: the cost ceiling a platform team sets. */
  minIntervalMs: number;
}

interface BudgetShares {
  /** For broadcasts (marketChanged), divided among the shards posting at once. */
  broadcast: number;
  /** For targeted events (forgeFulfilled), theirs alone. */
  targeted: number;
}

/** The budget's two shares; undefined when there is no budget. */
export function budgetShares({ postsPerSecond }: FanOutBudget): BudgetShares | undefined {
  if (postsPerSecond <= 0) return undefined;
  const targeted = postsPerSecond * budgetLimits.targetedShare;
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
  /** Learns a factor another pacer was taught (a shard's), if lower than its own; only under a budget, as a share of it. */
  learn(factor: number): void;
  /** 429s seen. */
  readonly throttles: number;
}

/** The lowest share of its target a pacer falls to, however many 429s. */
const floorFactor = 1 / 16;
/** How close to the rate a 429 refused the pacer climbs back quickly. */
const cushion = 0.85;
/** Above the cushion the rate climbs this many times slower: the quota it shares had no room there a moment ago. */
const probeSlowdown = 6;

/** What a 429 taught, as shares of the pacer's base rate: where it fell to, and where the 429 met it. */
interface Lesson {
  at: number;
  from: number;
  ceiling: number;
}

/** The share of its base a pacer may use `elapsed` ms after a lesson: quickly back to the cushion, then slowly on to 1. */
export function recovered({ from, ceiling }: Lesson, elapsed: number): number {
  const recovery = budgetLimits.throttleRecoveryMs;
  const resume = Math.max(from, cushion * ceiling);
  if (elapsed <= recovery) return from + (resume - from) * (elapsed / recovery);
  return Math.min(1, resume + (1 - resume) * ((elapsed - recovery) / (probeSlowdown * recovery)));
}

/** The shortest span a rate is measured over: a handful of posts a few milliseconds apart is no rate. */
const shortestSpanMs = 100;

/**
 * Posts a second, from when the posts of the last second went: over the span
 * they cover, not over a whole second, as a lane a 429 met in its first
 * moments was going at its full pace, not at the few posts it had made.
 */
function observedRate(times: readonly number[], at: number): number {
  const since = times.findIndex((t) => t > at - 1000);
  if (since < 0) return 1;
  const count = times.length - since;
  return Math.max(1, (count * 1000) / Math.max(shortestSpanMs, at - times[since]!));
}

/**
 * Spaces posts at `postsPerSecond` (0: as fast as they come, a fan-out
 * without a budget), letting `burst` of them through at once after a quiet
 * spell. A 429 pauses every post of this pacer (for `Retry-After` when the
 * answer gave one; the 429s of posts already in flight during that pause
 * count as the same one) and halves the rate, which climbs back to 85 % of
 * the rate the 429 met over `budgetLimits.throttleRecoveryMs`, then on to the
 * target six times slower: the quota is shared with traffic the pacer cannot
 * see, so a 429 says the share left to it is smaller than it thought. Without
 * a budget, the base a 429 halves is the rate the posts were going at (over
 * the last second, or the moments since they began). One pacer serves every
 * post of a lane for the life of its process, so what a 429 taught outlasts
 * the shard or broadcast that met it.
 */
export function pacer(postsPerSecond: number, burst = 1, now: () => number = () => performance.now()): Pacer {
  let target = postsPerSecond > 0 ? postsPerSecond : Number.POSITIVE_INFINITY;
  /** The slot of the next post; a past slot means unspent tokens, up to `burst` (all of them at first). */
  let nextAt = Number.NEGATIVE_INFINITY;
  let pausedUntil = 0;
  /** How many times a 429 paused the posts (or lengthened a pause): a post that waited through one takes a new slot. */
  let pauses = 0;
  let lesson: Lesson | undefined;
  /**
   * The rate a lesson's shares are of: the target, or without one the rate the posts went at, when the first 429
   * came. It outlasts a change of target, as the rate the quota refused does: a lower target than the lesson allows
   * is not slowed further.
   */
  let base = target;
  let throttles = 0;
  /** When the posts of the last second went: an unbudgeted pacer's measure of the rate a 429 refused (observedRate). */
  const recent: number[] = [];
  const factorAt = (at: number) => {
    if (!lesson) return 1;
    const share = recovered(lesson, at - lesson.at);
    if (share >= 1) lesson = undefined;
    return share;
  };
  const rate = (at: number) => (lesson ? Math.min(target, base * factorAt(at)) : target);
  const learnAt = (at: number, from: number, ceiling: number) => {
    if (!lesson) base = Number.isFinite(target) ? target : observedRate(recent, at);
    lesson = { at, from: Math.max(floorFactor, from), ceiling };
  };
  return {
    async take(stopAt = Number.POSITIVE_INFINITY) {
      for (;;) {
        const at = now();
        const remaining = stopAt - Date.now();
        const current = rate(at);
        const interval = Number.isFinite(current) ? 1000 / current : 0;
        const slot = Math.max(nextAt, at - (burst - 1) * interval, pausedUntil);
        if (slot - at >= remaining) return false;
        nextAt = slot + interval;
        if (!Number.isFinite(target) && !lesson) {
          recent.push(at);
          while (recent.length && recent[0]! <= at - 1000) recent.shift();
        }
        const pausesBefore = pauses;
        if (slot > at) await sleep(slot - at);
        if (pauses === pausesBefore) return true;
        // A 429 came while this post waited for its slot: it takes a new one after the pause, at the rate the 429
        // left, so that the posts the pause held go out spaced rather than all at once when it ends.
      }
    },
    throttled(retryAfterMs) {
      throttles++;
      const at = now();
      if (at >= pausedUntil) {
        const met = factorAt(at);
        learnAt(at, met / 2, met);
      }
      const pause = Number.isFinite(target) ? budgetLimits.throttlePauseMs.budgeted : budgetLimits.throttlePauseMs.unbudgeted;
      const until = at + (retryAfterMs ?? pause);
      if (until > pausedUntil) {
        pausedUntil = until;
        // The quota is empty: no post's slot comes before the pause's end, and none is owed a burst after it.
        nextAt = until;
        pauses++;
      }
    },
    setTarget(next) {
      target = next > 0 ? next : Number.POSITIVE_INFINITY;
    },
    get factor() {
      return factorAt(now());
    },
    learn(factor) {
      const at = now();
      // Without a budget the other pacer's base is no measure of this one's rate: it learns from its own 429s.
      if (!Number.isFinite(target)) return;
      if (factor < factorAt(at)) learnAt(at, factor, Math.min(1, factor / cushion));
    },
    get throttles() {
      return throttles;
    },
  };
}
