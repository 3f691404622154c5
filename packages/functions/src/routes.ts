import { z } from 'zod';
import { pageQuerySchema } from '@hatchery/core/query/paging';
import { editionSchema } from '@hatchery/core/indexer/editions';
import { pageSchema } from './schemas';
import type { InputSchemas } from './middleware/validate-input';

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
  /** Routes of the local developer experience; documented but not part of SPEC.md's API. */
  internal?: boolean;
}

export const httpRoutes = {
  listEditions: {
    method: 'GET',
    path: '/editions',
    handler: 'packages/functions/src/http/list-editions.handler',
    auth: 'none',
    summary: 'Editions of the catalog, paged.',
    request: { query: pageQuerySchema },
    response: pageSchema(editionSchema),
  },
  openApi: {
    method: 'GET',
    path: '/openapi.json',
    handler: 'packages/functions/src/http/openapi.handler',
    auth: 'none',
    summary: 'This OpenAPI document.',
    internal: true,
  },
  docs: {
    method: 'GET',
    path: '/docs',
    handler: 'packages/functions/src/http/docs.handler',
    auth: 'none',
    summary: 'A page that renders the OpenAPI document.',
    produces: 'text/html',
    internal: true,
  },
  preflight: {
    method: 'OPTIONS',
    path: '/{proxy+}',
    handler: 'packages/functions/src/http/preflight.handler',
    auth: 'none',
    summary: 'CORS preflight for every path.',
    internal: true,
  },
  notFound: {
    method: 'ANY',
    path: '/{proxy+}',
    handler: 'packages/functions/src/http/not-found.handler',
    auth: 'none',
    summary: 'A problem+json 404 for every path no other route serves.',
    internal: true,
  },
} as const satisfies Record<string, HttpRoute>;

export type HttpRouteName = keyof typeof httpRoutes;
