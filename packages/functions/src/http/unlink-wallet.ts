import { unlinkWallet } from '@hatchery/core/accounts/account';
import { httpRoutes } from '../routes';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(httpRoutes.unlinkWallet, (_input, caller) => unlinkWallet(caller.userId));
