import { accountSchema, challengeSchema } from '@hatchery/core/accounts/wire';
import { healthSchema } from '@hatchery/core/health';
import { editionSchema } from '@hatchery/core/indexer/editions-schema';
import { forgeRequestSchema } from '@hatchery/core/indexer/forge-requests-schema';
import { listingSchema } from '@hatchery/core/indexer/listings-schema';
import { nftItemSchema } from '@hatchery/core/indexer/nfts-schema';
import { referralInfoSchema } from '@hatchery/core/indexer/referral';
import { saleSchema } from '@hatchery/core/indexer/sales-schema';
import { stakingPairSchema } from '@hatchery/core/indexer/staking-schema';
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
 * "Function sizes and cold starts"). The schemas it names live in modules
 * no handler imports (a list's item in its read model's `-schema.ts`): a
 * bundle leaves out a module it takes nothing from, but keeps every statement
 * of a module it takes something from that calls zod. A route with none
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
