import type { HttpRoute } from './http-route';
import { accountRoutes } from './routes/accounts';
import { catchAllRoutes } from './routes/catch-all';
import { docsRoutes } from './routes/docs';
import { eventRoutes } from './routes/events';
import { indexedRoutes } from './routes/indexed';
import { operationsRoutes } from './routes/operations';
import { realtimeRoutes } from './routes/realtime';

export type { HttpRoute };

/**
 * The route table: the one source for the infrastructure (infra/api.ts), the
 * local gateway, the OpenAPI document and the tests.
 */
export const httpRoutes = {
  ...indexedRoutes,
  ...eventRoutes,
  ...docsRoutes,
  ...accountRoutes,
  ...realtimeRoutes,
  ...operationsRoutes,
  ...catchAllRoutes,
} as const satisfies Record<string, HttpRoute>;

export type HttpRouteName = keyof typeof httpRoutes;
