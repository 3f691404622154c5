export type { Api, ApiClient, BlockRef, CallOptions, ClientOptions, RouteCall, RouteInput, RouteOutput, Validate } from './api.js';
export { createClient, minBlockText, type Client } from './client.js';
export { indexedBlocks, parseIndexedBlock, type IndexedBlocks } from './indexed-block.js';
export { IndexWaitError, type IndexWaitOptions } from './index-wait.js';
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
