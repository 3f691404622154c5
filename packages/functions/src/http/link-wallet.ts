import { linkWallet } from '@hatchery/core/accounts/link';
import { walletPostRateLimit } from '@hatchery/core/accounts/rate-limit';
import * as routes from '../routes/accounts';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(routes.linkWallet, ({ body }, caller) => linkWallet(caller.userId, body), {
  rateLimit: walletPostRateLimit,
});
