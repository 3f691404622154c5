import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/**
 * What spends the account's throttle: an HTTP API request, a WebSocket
 * connect, a WebSocket message in, a management API call (PostToConnection,
 * DeleteConnection, GetConnection). API Gateway counts them all in one bucket
 * per account and Region.
 */
type QuotaKind = 'http' | 'connect' | 'message' | 'management';

export interface QuotaSettings {
  /** Steady requests a second; 0 turns the quota off. */
  perSecond: number;
  /** The bucket's size: requests that may pass at once after a quiet spell. */
  burst: number;
}

export interface AccountQuota {
  /** Spends one request of `kind`: false when the bucket is empty (the caller answers 429). */
  take(kind: QuotaKind): boolean;
  /** Changes the rate and burst now, with a full bucket (the bench turns the quota on after connecting its clients). */
  configure(settings: QuotaSettings): void;
  settings(): QuotaSettings;
  /** Requests let through and refused, by kind, since the start or the last reset. */
  stats(): Record<'allowed' | 'throttled', Record<QuotaKind, number>>;
  /** Requests of `kind` made in each whole second (epoch seconds) of the last hour, let through or refused, since the start or the last reset. */
  perSecond(kind: QuotaKind): Map<number, number>;
  reset(): void;
}

const kinds: readonly QuotaKind[] = ['http', 'connect', 'message', 'management'];
/** How many seconds of per-second counts a quota keeps: a stack left running for days keeps no more. */
const keptSeconds = 3600;

const zero = () => Object.fromEntries(kinds.map((kind) => [kind, 0])) as Record<QuotaKind, number>;

/**
 * The local stand-in for API Gateway's account-level throttle: one token
 * bucket of `burst` requests, refilled at `perSecond`, which every request of
 * the local gateway (HTTP, WebSocket, management API) draws from. Off by
 * default, as the local stack serves one developer.
 */
export function accountQuota(initial: QuotaSettings = { perSecond: 0, burst: 0 }, now: () => number = () => performance.now()): AccountQuota {
  let settings = initial;
  let tokens = initial.burst;
  let updated = now();
  let counts = { allowed: zero(), throttled: zero() };
  let seconds = new Map<QuotaKind, Map<number, number>>(kinds.map((kind) => [kind, new Map()]));
  return {
    take(kind) {
      const at = now();
      const second = Math.floor((performance.timeOrigin + at) / 1000);
      const series = seconds.get(kind)!;
      const count = series.get(second);
      if (count === undefined) {
        // Seconds go in in order, so the oldest come first.
        for (const kept of series.keys()) {
          if (kept > second - keptSeconds) break;
          series.delete(kept);
        }
      }
      series.set(second, (count ?? 0) + 1);
      if (settings.perSecond > 0) {
        tokens = Math.min(settings.burst, tokens + ((at - updated) / 1000) * settings.perSecond);
        updated = at;
        if (tokens < 1) {
          counts.throttled[kind]++;
          return false;
        }
        tokens -= 1;
      }
      counts.allowed[kind]++;
      return true;
    },
    configure(next) {
      settings = next;
      tokens = next.burst;
      updated = now();
    },
    settings: () => settings,
    stats: () => ({ allowed: { ...counts.allowed }, throttled: { ...counts.throttled } }),
    perSecond: (kind) => new Map(seconds.get(kind)),
    reset() {
      counts = { allowed: zero(), throttled: zero() };
      seconds = new Map(kinds.map((kind) => [kind, new Map()]));
    },
  };
}

/** API Gateway's body for a throttled request, on the HTTP API as on the management API. */
export const throttledBody = JSON.stringify({ message: 'Too Many Requests' });

/** An HTTP API request over the quota: API Gateway's own 429, with no Retry-After (API Gateway sends none). */
export function writeThrottledHttp(response: ServerResponse): void {
  response.writeHead(429, { 'content-type': 'application/json', 'apigw-requestid': randomUUID() });
  response.end(throttledBody);
}

/** A management API call over the quota: 429 LimitExceededException, the error type the SDK reads from `x-amzn-errortype`. */
export function writeThrottledManagement(response: ServerResponse): void {
  response.writeHead(429, { 'content-type': 'application/json', 'x-amzn-errortype': 'LimitExceededException', 'x-amzn-requestid': randomUUID() });
  response.end(throttledBody);
}
