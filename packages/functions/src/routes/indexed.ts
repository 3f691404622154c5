import type { HttpRoute } from '../routes';

/** The public read endpoints over the indexer schema, other than /editions (issue: indexed data). */
export const indexedRoutes = {} as const satisfies Record<string, HttpRoute>;
