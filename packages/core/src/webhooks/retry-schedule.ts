/** The delay before the second attempt, before jitter; each later attempt's doubles it. */
const firstRetryDelayMs = 5_000;

/** The longest wait between two attempts, before jitter, and the most of a receiver's `Retry-After` honoured. */
export const longestRetryDelayMs = 3_600_000;

/** How long a delivery is retried, from its first attempt, before it is dead-lettered. */
export const defaultRetryWindowMs = 24 * 3_600_000;

/**
 * How long to wait after a delivery's `attempt`-th attempt (1 after the first) failed: 5 s doubling at each attempt
 * up to an hour, with equal jitter (between half of that and all of it), so that the deliveries that failed together
 * do not return together, and none returns at once. Never sooner than the receiver's `Retry-After`.
 */
export function nextAttemptDelayMs({
  attempt,
  retryAfterMs,
  random = Math.random,
}: {
  attempt: number;
  retryAfterMs?: number | undefined;
  /** A number in [0, 1): Math.random unless a test fixes it. */
  random?: () => number;
}): number {
  const backoff = Math.min(longestRetryDelayMs, firstRetryDelayMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.round(backoff / 2 + (random() * backoff) / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** Whether a delivery has been retried for its whole window, and is dead-lettered rather than tried again. */
export function isExpired({ firstAttemptAt, now, retryWindowMs = defaultRetryWindowMs }: { firstAttemptAt: Date; now: Date; retryWindowMs?: number }): boolean {
  return now.getTime() - firstAttemptAt.getTime() >= retryWindowMs;
}
