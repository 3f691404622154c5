import type { HttpRoute } from '../http-route';

export const health = {
  method: 'GET',
  path: '/health',
  handler: 'packages/functions/src/http/health.handler',
  auth: 'none',
  summary: 'Liveness and database reachability: 200, or 503 problem+json when the database does not answer within 1 s. Not rate limited, never cached.',
  problems: [503],
  ipRateLimited: false,
  // What a monitor reads must be now, never a cache's copy.
  cacheControl: 'no-store',
} as const satisfies HttpRoute;

/** Routes for the platform team that runs the service. */
export const operationsRoutes = { health } as const satisfies Record<string, HttpRoute>;
