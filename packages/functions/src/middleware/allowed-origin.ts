import { corsPolicy, isRequestOriginAllowed } from '../cors-policy';
import { AppError } from '@hatchery/core/errors';
import type { HttpMiddleware } from './types';

/** 403 for a browser page of an origin the CORS settings do not allow, by the rule the hub's WebSocket applies on $connect. */
export const allowedOriginOnly = (): HttpMiddleware => ({
  before: ({ event }) => {
    if (!isRequestOriginAllowed(event.headers?.origin, event.headers?.host, corsPolicy())) {
      throw new AppError('forbidden', 'This origin may not use the hub.');
    }
  },
});
