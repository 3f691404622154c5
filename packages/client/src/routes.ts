import type { RouteTypes } from './route-types.js';

/** The server's route table as the client sees it (generated from the table and its zod schemas): the one source every typed call is derived from. */
export type RouteTable = RouteTypes;

/** Every route of the table a client calls (the developer-experience routes are not generated). */
export type RouteName = keyof RouteTable;

/** Where a route's input other than its path parameters travels. */
type InputPlace<K extends RouteName> = RouteTable[K] extends { body: object } ? 'body' : RouteTable[K] extends { query: object } ? 'query' : 'none';

/** What the browser needs of a route at run time; the types above say everything else. */
export type WireRoute<K extends RouteName> = readonly [
  method: RouteTable[K]['method'],
  path: RouteTable[K]['path'],
  auth: RouteTable[K]['auth'],
  input: InputPlace<K>,
];
