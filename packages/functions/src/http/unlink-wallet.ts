import { unlinkWallet } from '@hatchery/core/accounts/account';
import * as routes from '../routes/accounts';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(routes.unlinkWallet, (_input, caller) => unlinkWallet(caller.userId));
