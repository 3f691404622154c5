import { editionSchema } from '@hatchery/core/indexer/editions';
import { pageQuerySchema } from '@hatchery/core/query/paging';
import type { HttpRoute } from '../routes';
import { pageSchema } from '../schemas';

export const foundationRoutes = {
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
