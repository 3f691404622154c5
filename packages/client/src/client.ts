import type { Api, ApiClient, BlockRef, CallOptions, ClientOptions, RouteInput, RouteOutput } from './api.js';
import { filterText, orderText, type FieldTypes, type FilterInput, type ListRouteName, type OrderInput } from './filter.js';
import { waitForIndexedBlock, type IndexWaitOptions } from './index-wait.js';
import { send } from './http.js';
import type { RouteName } from './routes.js';
import { wireRoutes } from './wire-routes.js';
import { linkWallet, requireWalletLinked, type LinkedAccount, type LinkOptions, type LinkOutcome, type WalletSigner } from './wallet.js';

export interface Client extends ApiClient {
  /** See wallet.ts linkWallet. */
  linkWallet(signer: WalletSigner, options?: LinkOptions): Promise<LinkOutcome>;
  /** See wallet.ts requireWalletLinked. */
  requireWalletLinked(options?: { address?: string; signal?: AbortSignal }): Promise<LinkedAccount>;
  /**
   * Every item of a list, in its order, page after page by cursor (`nextCursor` as `after`) until the last:
   * `for await (const sale of client.walk('listSales', { filter }))`. Rows indexed meanwhile that sort
   * after the position reached are met; none is met twice.
   */
  walk<K extends ListRouteName>(name: K, input?: WalkInput<K>, options?: CallOptions): AsyncIterable<ListItem<K>>;
  /**
   * Marks the reads that follow as following the player's own transaction: each sends `minBlock` (the highest block
   * marked per chain) unless the call names its own, so the server answers only once the index holds that block.
   */
  readAfter(block: BlockRef): void;
  /** See index-wait.ts waitForIndexedBlock: resolves with the indexed block once it is at least `block`. */
  waitForIndexedBlock(block: bigint | number | string, options?: IndexWaitOptions): Promise<bigint>;
}

function encodeQuery(input: Record<string, unknown>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (name === 'filter') query[name] = filterText(value as FilterInput<FieldTypes>);
    else if (name === 'orderBy') query[name] = orderText(value as OrderInput<FieldTypes>);
    else query[name] = String(value);
  }
  return query;
}

/** `minBlock` as the server reads it: `<block>`, or `<chainId>:<block>`. */
export function minBlockText(block: BlockRef): string {
  return typeof block === 'object' ? `${block.chainId}:${BigInt(block.block)}` : String(BigInt(block));
}

/** The floor `readAfter` keeps: the highest block marked, per chain (`undefined` for a bare block). */
type Floor = Map<number | undefined, bigint>;

function raise(floor: Floor, block: BlockRef): void {
  const [chainId, value] = typeof block === 'object' ? [block.chainId, BigInt(block.block)] : [undefined, BigInt(block)];
  const highest = floor.get(chainId) ?? -1n;
  // Deleted first, so that the chain marked last is last in the map's order.
  floor.delete(chainId);
  floor.set(chainId, value > highest ? value : highest);
}

/** One minBlock for a read: the server takes one, so with several chains marked, the chain marked last wins. */
function floorText(floor: Floor): string | undefined {
  const last = [...floor].at(-1);
  return last && minBlockText(last[0] === undefined ? last[1] : { chainId: last[0], block: last[1] });
}

async function call(
  options: ClientOptions,
  name: RouteName,
  input: Record<string, unknown> = {},
  callOptions: CallOptions = {},
  floor?: Floor,
): Promise<unknown> {
  const [method, template, auth, place] = wireRoutes[name];
  const rest = { ...input };
  // Only the reads of indexed data (GETs with a query) take minBlock.
  if (method === 'GET' && place === 'query' && rest.minBlock === undefined) {
    const minBlock = callOptions.minBlock !== undefined ? minBlockText(callOptions.minBlock) : floor && floorText(floor);
    if (minBlock !== undefined) rest.minBlock = minBlock;
  }
  const path = template.replace(/\{(\w+)\}/g, (_match, param: string) => {
    const value = rest[param];
    delete rest[param];
    if (typeof value !== 'string') throw new TypeError(`${name}: '${param}' is required`);
    return encodeURIComponent(value);
  });
  const body = await send(options, {
    method,
    path,
    auth: auth === 'jwt',
    query: place === 'query' ? encodeQuery(rest) : undefined,
    body: place === 'body' ? rest : undefined,
    signal: callOptions.signal,
  });
  return options.validate ? options.validate(name, body) : body;
}

type ListItem<K extends ListRouteName> = RouteOutput<K> extends { items: readonly (infer T)[] } ? T : never;
type WalkInput<K extends ListRouteName> = Omit<RouteInput<K>, 'page' | 'after'>;

async function* walk<K extends ListRouteName>(
  options: ClientOptions,
  name: K,
  input?: WalkInput<K>,
  callOptions?: CallOptions,
  floor?: Floor,
): AsyncGenerator<ListItem<K>> {
  let after: string | undefined;
  do {
    const page = (await call(options, name, { ...(input as Record<string, unknown>), ...(after !== undefined && { after }) }, callOptions, floor)) as {
      items: ListItem<K>[];
      nextCursor?: string;
    };
    yield* page.items;
    after = page.nextCursor;
  } while (after !== undefined);
}

export function createClient(options: ClientOptions): Client {
  const floor: Floor = new Map();
  const api = Object.fromEntries(
    Object.keys(wireRoutes).map((name) => [
      name,
      (input?: Record<string, unknown>, callOptions?: CallOptions) => call(options, name as RouteName, input, callOptions, floor),
    ]),
  ) as unknown as Api;
  const client: Client = {
    api,
    options,
    linkWallet: (signer, linkOptions) => linkWallet(client, signer, linkOptions),
    requireWalletLinked: (gateOptions) => requireWalletLinked(client, gateOptions),
    readAfter: (block) => raise(floor, block),
    waitForIndexedBlock: (block, waitOptions) => waitForIndexedBlock(client, block, waitOptions),
    walk: (name, input, callOptions) => walk(options, name, input, callOptions, floor),
  };
  return client;
}
