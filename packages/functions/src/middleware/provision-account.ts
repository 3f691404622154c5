import { provisionAccount as ensureAccount } from '@hatchery/core/accounts/provision';
import type { HttpMiddleware } from './types';
import { callerOf } from './caller';

/** SPEC.md "Automatic account provisioning": after authentication, before the handler, on every protected route. */
export const provisionAccount = (): HttpMiddleware => ({
  before: (request) => ensureAccount(callerOf(request.context)),
});
