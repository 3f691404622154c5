import { requestChallenge } from '@hatchery/core/accounts/challenge';
import { walletPostRateLimit } from '@hatchery/core/accounts/rate-limit';
import * as routes from '../routes/accounts';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(routes.requestWalletNonce, (_input, caller) => requestChallenge(caller.userId), {
  rateLimit: walletPostRateLimit,
});
