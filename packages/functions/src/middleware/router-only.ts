import { requestsSettings } from '@hatchery/platform/config/requests';
import { AppError } from '@hatchery/core/errors';
import { cameThroughRouter, originVerifyHeader } from '../origin-verify';
import type { HttpMiddleware } from './types';

/** 403 for a request that did not come through the router (in AWS: one sent straight to the API's execute-api endpoint). */
export const routerOnly = (): HttpMiddleware => ({
  before: ({ event }) => {
    if (!cameThroughRouter(event.headers?.[originVerifyHeader], requestsSettings().ORIGIN_VERIFY_SECRET)) {
      throw new AppError('forbidden', 'Requests must come through the service’s base URL.');
    }
  },
});
