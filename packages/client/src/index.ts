export {
  createClient,
  minBlockText,
  type Api,
  type BlockRef,
  type CallOptions,
  type Client,
  type ClientOptions,
  type RouteCall,
  type RouteInput,
  type RouteOutput,
  type Validate,
} from './client.js';
export { indexedBlocks, IndexWaitError, parseIndexedBlock, type IndexedBlocks, type IndexWaitOptions } from './freshness.js';
export {
  and,
  escapeValue,
  filter,
  or,
  type FieldBuilder,
  type Fields,
  type Filter,
  type FilterBuilders,
  type FilterInput,
  type OrderInput,
  type Sort,
} from './filter.js';
export { HatcheryProblem, isProblem, retryAfterMs, type HttpOptions, type ProblemBody, type RetryOptions } from './http.js';
export type { RouteName } from './routes.js';
export {
  linkWallet,
  requireWalletLinked,
  signingWith,
  WalletGateError,
  type Account,
  type Eip1193Provider,
  type EthersSignerLike,
  type LinkedAccount,
  type LinkOptions,
  type LinkOutcome,
  type ViemAccountLike,
  type ViemWalletClientLike,
  type WalletSigner,
} from './wallet.js';
