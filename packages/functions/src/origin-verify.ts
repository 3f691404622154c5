import { timingSafeEqual } from 'node:crypto';

/**
 * The header the router (CloudFront) adds to every request it forwards, so
 * that the APIs can refuse traffic sent to their own execute-api endpoints,
 * around the router's WAF and HSTS policy.
 */
export const originVerifyHeader = 'x-hatchery-origin-verify';

/** Whether a request carries the router's secret; with no secret configured (the local stack) every request does. */
export function cameThroughRouter(headerValue: string | undefined, secret: string | undefined): boolean {
  if (secret === undefined) return true;
  if (headerValue === undefined) return false;
  const given = Buffer.from(headerValue);
  const expected = Buffer.from(secret);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
