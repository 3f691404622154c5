import { provisionAccount as ensureAccount } from '@hatchery/core/accounts/provision';
import { accountProvisioned } from '../security-events';
import type { HttpMiddleware } from './types';
import { callerOf } from './caller';

/** Automatic account provisioning (docs/http-api.md): after authentication, before the handler, on every protected route. */
export const provisionAccount = (): HttpMiddleware => ({
  before: async (request) => {
    const caller = callerOf(request.context);
    if (await ensureAccount(caller)) accountProvisioned(caller.userId);
  },
});
