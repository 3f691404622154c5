/**
 * The hub's delivery deadlines and retries, the one place they are stated: the
 * AWS clients, the fan-out, the listener, the functions' timeouts and infra
 * derive theirs from these. They hold together as
 * test/unit/aws/deadlines.test.ts checks: every call a shard may start before
 * its stop ends, retries included, within the stop's margin, so the stop always
 * comes before the function's timeout and a shard is never cut off mid-call.
 */
export const deliveryDeadlines = {
  /**
   * The fan-out function's timeout (infra, and the local stack's Lambda service). A shard posts at its part of the
   * broadcast budget, so it takes about as long as the whole audience at the budget: 5 minutes carry 1.3 million
   * connections at the default budget's broadcast share (4,500 a second).
   */
  shardTimeoutMs: 300_000,
  /**
   * A shard stops starting calls this long before its timeout: the longest call it may start before then (a post, a
   * claim, the removal of a gone connection) ends within it, so a timeout never makes the retry re-send what was sent.
   */
  shardStopMarginMs: 2_000,
  /** A management API call (a post, a close), its retries included: a post started just before a shard's stop ends before its timeout. */
  managementCallMs: 1_900,
  /**
   * A DynamoDB call on the hub's records (connections, the delivery ledger, the listener's state), its retries
   * included: a claim or a removal started just before a shard's stop ends by its timeout.
   */
  recordsCallMs: 2_000,
  /** Times a shard tries a failed claim in the delivery ledger again, while its stop allows. */
  claimRetries: 3,
  /** Times the listener tries a failed shard invocation again (it fails before its first post, so a retry re-sends nothing). */
  shardRetries: 2,
  /**
   * Times the listener sends a broadcast again (a new version, the same listings) when the last one left posts
   * undelivered or a shard unhanded: each client then ends on the latest state, and a connection whose posts keep
   * failing costs the audience a bounded number of repeats.
   */
  broadcastRepeats: 3,
  /**
   * How long the listener keeps trying a forgeFulfilled post answered 429: by then the buyer's client has given up
   * waiting and read its forge requests (the client's forge fallback, docs/realtime.md), so a later post is of no use.
   */
  targetedMs: 45_000,
} as const;

/** When a shard with `remainingMs` before its timeout stops starting calls (epoch ms): a fan-out function's invocation, or a shard the listener posts itself. */
export const shardStopAt = (remainingMs: number, now = Date.now()): number => now + remainingMs - deliveryDeadlines.shardStopMarginMs;
