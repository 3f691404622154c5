import { linkWallet, WalletLinkRefused } from '@hatchery/core/accounts/link';
import { walletPostRateLimit } from '@hatchery/core/accounts/rate-limit';
import * as routes from '../routes/accounts';
import { walletLinked, walletLinkRefused } from '../security-events';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(
  routes.linkWallet,
  async ({ body }, caller) => {
    try {
      const account = await linkWallet(caller.userId, body);
      walletLinked(account);
      return account;
    } catch (error) {
      if (error instanceof WalletLinkRefused) walletLinkRefused(caller.userId, body.address, error.reason);
      throw error;
    }
  },
  { rateLimit: walletPostRateLimit },
);
