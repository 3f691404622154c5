import { getAccount } from '@hatchery/core/accounts/account';
import * as routes from '../routes/accounts';
import { protectedHandler } from './protected-handler';

export const handler = protectedHandler(routes.getMe, (_input, caller) => getAccount(caller.userId));
