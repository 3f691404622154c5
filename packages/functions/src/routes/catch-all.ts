import type { HttpRoute } from '../http-route';

const preflight = {
  method: 'OPTIONS',
  path: '/{proxy+}',
  handler: 'packages/functions/src/http/preflight.handler',
  auth: 'none',
  summary: 'CORS preflight for every path.',
  internal: true,
} as const satisfies HttpRoute;

export const notFound = {
  method: 'ANY',
  path: '/{proxy+}',
  handler: 'packages/functions/src/http/not-found.handler',
  auth: 'none',
  summary: 'A problem+json 404 for every path no other route serves; a path that only lacks a trailing slash’s removal is redirected (308).',
  produces: 'other',
  internal: true,
} as const satisfies HttpRoute;

export const catchAllRoutes = { preflight, notFound } as const satisfies Record<string, HttpRoute>;
