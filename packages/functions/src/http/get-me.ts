import { getAccount } from '@hatchery/core/accounts/account';
import { httpRoutes } from '../routes';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(httpRoutes.getMe, (_input, caller) => getAccount(caller.userId));
