/**
 * Per-client-IP token bucket: the local stand-in for API Gateway's stage
 * throttling (docs/deploying.md). `perSecond` 0 turns it off.
 */
export function ipRateLimiter(perSecond: number, burst = perSecond * 2) {
  const buckets = new Map<string, { tokens: number; updated: number }>();
  return (ip: string, now = Date.now()): { allowed: true } | { allowed: false; retryAfterSeconds: number } => {
    if (perSecond <= 0) return { allowed: true };
    const bucket = buckets.get(ip) ?? { tokens: burst, updated: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updated) / 1000) * perSecond);
    bucket.updated = now;
    buckets.set(ip, bucket);
    if (bucket.tokens < 1) return { allowed: false, retryAfterSeconds: Math.ceil((1 - bucket.tokens) / perSecond) };
    bucket.tokens -= 1;
    return { allowed: true };
  };
}
