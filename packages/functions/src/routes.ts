import type * as z from 'zod';
import type { InputSchemas } from './middleware/validate-input';
import { accountRoutes } from './routes/accounts';
import { foundationRoutes } from './routes/foundation';
import { indexedRoutes } from './routes/indexed';
import { realtimeRoutes } from './routes/realtime';

/**
 * The route table: the one source for the infrastructure (infra/api.ts), the
 * local gateway, the OpenAPI document and the tests. `handler` is SST's
 * notation: a file path from the repository root, then the export name.
 */
export interface HttpRoute {
  method: 'GET' | 'POST' | 'DELETE' | 'OPTIONS' | 'ANY';
  path: string;
  handler: `packages/functions/src/${string}.handler`;
  auth: 'jwt' | 'none';
  summary: string;
  request?: InputSchemas;
  response?: z.ZodType;
  /** Problem statuses this route can answer besides 422/500/503, for the OpenAPI document. */
  problems?: readonly number[];
  produces?: 'application/json' | 'text/html';
  /** 403 for a browser page of an origin the CORS settings do not allow, rather than only leaving out the CORS headers. */
  refusesOtherOrigins?: boolean;
  /** Routes of the local developer experience; documented but not part of SPEC.md's API. */
  internal?: boolean;
}

export const httpRoutes = {
  ...foundationRoutes,
  ...accountRoutes,
  ...indexedRoutes,
  ...realtimeRoutes,
} as const satisfies Record<string, HttpRoute>;

export type HttpRouteName = keyof typeof httpRoutes;
