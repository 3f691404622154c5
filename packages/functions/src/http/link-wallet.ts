import { linkWallet } from '@hatchery/core/accounts/link';
import { walletPostRateLimit } from '@hatchery/core/accounts/rate-limit';
import { httpRoutes } from '../routes';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(httpRoutes.linkWallet, ({ body }, caller) => linkWallet(caller.userId, body), {
  rateLimit: walletPostRateLimit,
});
