import type { Identity } from '@hatchery/core/accounts/identity';
import type { RateLimitRule } from '@hatchery/core/accounts/rate-limit';
import { authenticate } from '../middleware/authenticate';
import { callerOf } from '../middleware/caller';
import { provisionAccount } from '../middleware/provision-account';
import { rateLimit } from '../middleware/rate-limit';
import type { HttpContext } from '../middleware/types';
import type { HttpRoute } from '../routes';
import { httpHandler, type RouteInput } from './handler';

/**
 * A handler for an `auth: 'jwt'` route: token verification, then account
 * provisioning (so the handler always finds the account), then the optional
 * per-account rate limit; the handler gets the verified caller.
 */
export function protectedHandler<R extends HttpRoute & { auth: 'jwt' }, T>(
  route: R,
  run: (input: RouteInput<R>, caller: Identity, context: HttpContext) => Promise<T>,
  options: { rateLimit?: () => RateLimitRule } = {},
) {
  return httpHandler(route, (input, context) => run(input, callerOf(context), context), {
    auth: [authenticate(), provisionAccount(), ...(options.rateLimit ? [rateLimit(options.rateLimit)] : [])],
  });
}
