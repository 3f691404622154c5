import { isClockSkewCorrectedError, isClockSkewError, MAXIMUM_RETRY_DELAY, Retry, StandardRetryStrategy } from '@smithy/core/retry';
import type { RetryErrorInfo, RetryStrategyV2, StandardRetryToken } from '@smithy/types';

interface RetryPolicy {
  /** Attempts of one call, the first included. */
  maxAttempts: number;
  /** The backoff's base for errors other than throttling (throttling's is the SDK's own, 1 s). */
  baseDelayMs: number;
  /** One call, its retries and their waits included, ends within this. */
  deadlineMs: number;
  /** The longest one attempt takes: the handler's requestTimeout. */
  attemptTimeoutMs: number;
  /**
   * For calls that must not take effect twice (a frame posted, a counter
   * incremented): retried only when the failure proves the server did not act.
   */
  atMostOnce: boolean;
  /**
   * The caller paces its calls and handles throttling itself (the fan-out's
   * pacer): a throttled call is then not retried here, so the first 429 slows
   * every post of the process at once instead of each post retrying at the
   * old rate and spending more of the quota that refused it.
   */
  callerPaces?: boolean;
}

/** Node fails with these before a request's first byte is written: the name did not resolve, or no connection was made. */
const unsentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** The handler's connectionTimeout (@smithy/node-http-handler's set-connection-timeout.js): the socket never connected. */
const neverConnected = /did not establish a connection/;

/**
 * True when the server cannot have applied the request: it refused it
 * (throttled, or a signature from a skewed clock), or the request never
 * left. A timeout or a reset after sending, a 5xx, may hide an applied request.
 */
export function certainlyUnapplied({ error, errorType }: RetryErrorInfo): boolean {
  if (errorType === 'THROTTLING') return true;
  if (!error) return false;
  if (isClockSkewError(error) || isClockSkewCorrectedError(error)) return true;
  return neverSent(error);
}

/** The request never left this process: its name did not resolve, or no connection was made. */
export function neverSent(error: unknown): boolean {
  const { code, message, name } = (error ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
  return (typeof code === 'string' && unsentCodes.has(code)) || (name === 'TimeoutError' && typeof message === 'string' && neverConnected.test(message));
}

/**
 * The longest wait the SDK's standard strategy can choose before retry
 * `retryCount + 1` (util-retry's StandardRetryStrategy and
 * DefaultRetryBackoffStrategy): full jitter up to base × 2^retryCount, capped
 * at 20 s; a Retry-After hint lengthens it by at most 5 s more.
 */
export function longestWaitMs({ errorType, retryAfterHint }: RetryErrorInfo, retryCount: number, baseDelayMs: number): number {
  const base = errorType === 'THROTTLING' ? Retry.throttlingDelay() : baseDelayMs;
  const backoff = Math.min(base * 2 ** retryCount, MAXIMUM_RETRY_DELAY);
  const hinted = retryAfterHint ? Math.min(retryAfterHint.getTime() - Date.now(), backoff + 5_000) : 0;
  return Math.max(backoff, hinted);
}

/**
 * The SDK's standard retry strategy (its attempts, backoff, Retry-After and
 * retry quota, which stops retries from multiplying an AWS incident's load)
 * held to a deadline: a retry is refused when its longest wait and a whole
 * attempt could end past `deadlineMs` from the call's start, so a call's worst
 * case is known before it starts. With `atMostOnce`, a retry is also refused
 * unless the failure proves the request was not applied.
 */
export class DeadlineRetryStrategy implements RetryStrategyV2 {
  private readonly standard: StandardRetryStrategy;
  private readonly startedAt = new WeakMap<StandardRetryToken, number>();

  constructor(readonly policy: RetryPolicy) {
    this.standard = new StandardRetryStrategy({ maxAttempts: policy.maxAttempts, baseDelay: policy.baseDelayMs });
  }

  async acquireInitialRetryToken(scope: string): Promise<StandardRetryToken> {
    const token = await this.standard.acquireInitialRetryToken(scope);
    this.startedAt.set(token, Date.now());
    return token;
  }

  async refreshRetryTokenForRetry(token: StandardRetryToken, errorInfo: RetryErrorInfo): Promise<StandardRetryToken> {
    const { atMostOnce, baseDelayMs, attemptTimeoutMs, deadlineMs, callerPaces } = this.policy;
    if (callerPaces && errorInfo.errorType === 'THROTTLING') throw new Error('Not retried: throttled, and the caller paces its own retries.');
    if (atMostOnce && !certainlyUnapplied(errorInfo)) throw new Error('Not retried: the request may have been applied.');
    const startedAt = this.startedAt.get(token) ?? Date.now();
    if (Date.now() - startedAt + longestWaitMs(errorInfo, token.getRetryCount(), baseDelayMs) + attemptTimeoutMs > deadlineMs) {
      throw new Error('Not retried: another attempt could end past the deadline.');
    }
    const next = await this.standard.refreshRetryTokenForRetry(token, errorInfo);
    this.startedAt.set(next, startedAt);
    return next;
  }

  recordSuccess(token: StandardRetryToken): void {
    this.standard.recordSuccess(token);
  }
}
