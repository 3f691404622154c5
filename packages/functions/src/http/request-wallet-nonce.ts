import { requestChallenge } from '@hatchery/core/accounts/challenge';
import { walletPostRateLimit } from '@hatchery/core/accounts/rate-limit';
import { httpRoutes } from '../routes';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(httpRoutes.requestWalletNonce, (_input, caller) => requestChallenge(caller.userId), {
  rateLimit: walletPostRateLimit,
});
