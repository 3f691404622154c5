import { unlinkWallet } from '@hatchery/core/accounts/account';
import * as routes from '../routes/accounts';
import { walletUnlinked } from '../security-events';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(routes.unlinkWallet, async (_input, caller) => {
  const { account, unlinkedWallet } = await unlinkWallet(caller.userId);
  if (unlinkedWallet !== undefined) walletUnlinked(caller.userId, unlinkedWallet);
  return account;
});
