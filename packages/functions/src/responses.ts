import { accountSchema, challengeSchema } from '@hatchery/core/accounts/wire';
import { healthSchema } from '@hatchery/core/health';
import { editionSchema } from '@hatchery/core/indexer/editions';
import { forgeRequestSchema } from '@hatchery/core/indexer/forge-requests';
import { listingSchema } from '@hatchery/core/indexer/listings';
import { nftItemSchema } from '@hatchery/core/indexer/nfts';
import { referralInfoSchema } from '@hatchery/core/indexer/referral';
import { saleSchema } from '@hatchery/core/indexer/sales';
import { stakingPairSchema } from '@hatchery/core/indexer/staking';
import { summarySchema } from '@hatchery/core/indexer/summary';
import { negotiateResponseSchema } from '@hatchery/core/realtime/protocol';
import type * as z from '@hatchery/platform/schema';
import type { HttpRouteName } from './routes';
import { pageSchema } from './schemas';

/**
 * What each route of the table answers on success, by its name: the OpenAPI
 * document, the typed client's types, the smoke checks and the tests read it.
 * It lives apart from the route table because every handler imports its route,
 * and a handler that imported its answer's schema would construct it at every
 * cold start for a description only these readers use (docs/deploying.md,
 * "Function sizes and cold starts"). The schemas it names are declared
 * `@__PURE__` where they live, so a bundle that imports their module
 * for something else (a list's read model) leaves them out. A route with none
 * answers what its handler shapes (HTML, a file, a redirect) or nothing.
 */
export const responses = {
  listEditions: pageSchema(editionSchema),
  getMe: accountSchema,
  requestWalletNonce: challengeSchema,
  linkWallet: accountSchema,
  unlinkWallet: accountSchema,
  listAccountNfts: pageSchema(nftItemSchema),
  listListings: pageSchema(listingSchema),
  listAccountStaking: pageSchema(stakingPairSchema),
  listAccountForgeRequests: pageSchema(forgeRequestSchema),
  getAccountReferral: referralInfoSchema,
  listSales: pageSchema(saleSchema),
  getSummary: summarySchema,
  negotiateHub: negotiateResponseSchema,
  health: healthSchema,
} as const satisfies Partial<Record<HttpRouteName, z.ZodMiniType>>;

/** The success schema of a route, if it has one. */
export const responseOf = (name: string): z.ZodMiniType | undefined => (responses as Partial<Record<string, z.ZodMiniType>>)[name];
