import { hitRateLimit, type RateLimitRule } from '@hatchery/core/accounts/rate-limit';
import { AppError } from '@hatchery/core/errors';
import { addMetric } from '@hatchery/platform/telemetry/metrics';
import { callerOf } from './caller';
import type { HttpMiddleware } from './types';

/** Counts the request against the caller's share of the rule (read per request, from configuration); 429 with `Retry-After` once it is used up. */
export const rateLimit = (ruleOf: () => RateLimitRule): HttpMiddleware => ({
  before: async (request) => {
    const rule = ruleOf();
    const decision = await hitRateLimit(rule, callerOf(request.context).userId);
    if (!decision.allowed) {
      addMetric('RateLimited');
      throw new AppError('rateLimited', `At most ${rule.limit} of these requests per ${rule.windowMs / 1000} s; try again later.`, undefined, {
        'retry-after': String(decision.retryAfterSeconds),
      });
    }
  },
});
