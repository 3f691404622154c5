import type { FieldsOf, FieldTypes, FilterInput, ListRouteName, OrderInput } from './filter.js';
import type { HttpOptions } from './http.js';
import type { RouteName, RouteTable } from './routes.js';

type Part<K extends RouteName, P extends 'params' | 'body' | 'query' | 'response'> = RouteTable[K] extends { [Q in P]: infer T } ? T : never;
type FieldsFor<K extends RouteName> = K extends ListRouteName ? FieldsOf<K> : FieldTypes;

/** Query parameters by their meaning (numbers as numbers), all optional; filter and orderBy also as builders. */
type QueryInput<K extends RouteName> = [Part<K, 'query'>] extends [never]
  ? {}
  : {
      [P in keyof Part<K, 'query'>]?: P extends 'filter'
        ? FilterInput<FieldsFor<K>>
        : P extends 'orderBy'
          ? OrderInput<FieldsFor<K>>
          : Exclude<Part<K, 'query'>[P], undefined>;
    };
type PartInput<K extends RouteName, P extends 'params' | 'body'> = [Part<K, P>] extends [never] ? {} : Part<K, P>;

/** One object: path parameters, then the query or the body, by name. */
export type RouteInput<K extends RouteName> = PartInput<K, 'params'> & PartInput<K, 'body'> & QueryInput<K>;
export type RouteOutput<K extends RouteName> = [Part<K, 'response'>] extends [never] ? unknown : Part<K, 'response'>;

/** A block, on the only chain indexed, or on the one named. */
export type BlockRef = bigint | number | string | { chainId: number; block: bigint | number | string };

export interface CallOptions {
  signal?: AbortSignal;
  /**
   * Have a read answered from an index that has reached this block (the server waits a few seconds for it, then
   * answers 409, which the client retries after its Retry-After): the block of the player's own transaction, so the
   * read shows what it did. Sent by the eight reads of indexed data; other calls ignore it.
   */
  minBlock?: BlockRef;
}

type NeedsInput<K extends RouteName> = {} extends RouteInput<K> ? false : true;
export type RouteCall<K extends RouteName> =
  NeedsInput<K> extends true
    ? (input: RouteInput<K>, options?: CallOptions) => Promise<RouteOutput<K>>
    : (input?: RouteInput<K>, options?: CallOptions) => Promise<RouteOutput<K>>;

/** A typed call for every route of the server's route table. */
export type Api = { readonly [K in RouteName]: RouteCall<K> };

/** Opt-in validation of every success body (for example with the server's own zod schemas); none by default. */
export type Validate = (route: RouteName, body: unknown) => unknown;

export interface ClientOptions extends HttpOptions {
  validate?: Validate;
}

/** A client's calls and its options: what the helpers built on the calls (wallet.ts, index-wait.ts) take. */
export interface ApiClient {
  readonly api: Api;
  readonly options: ClientOptions;
}
