import type { httpRoutes } from '@hatchery/functions/routes';

/** The server's route table, as a type: the one source every typed call is derived from. */
export type RouteTable = typeof httpRoutes;

/** Every route of the table a client calls: the developer-experience routes (`internal`) are left out. */
export type RouteName = { [K in keyof RouteTable]: RouteTable[K] extends { internal: true } ? never : K }[keyof RouteTable];

/** Where a route's input other than its path parameters travels. */
export type InputPlace<K extends RouteName> = RouteTable[K] extends { request: { body: object } }
  ? 'body'
  : RouteTable[K] extends { request: { query: object } }
    ? 'query'
    : 'none';

/** What the browser needs of a route at run time; the types above say everything else. */
export type WireRoute<K extends RouteName> = readonly [method: RouteTable[K]['method'], path: RouteTable[K]['path'], auth: RouteTable[K]['auth'], input: InputPlace<K>];
