import { accountSchema, challengeSchema } from '@hatchery/core/accounts/wire';
import { eventPageSchema } from '@hatchery/core/events/schema';
import { healthSchema } from '@hatchery/core/health';
import { editionsModel } from '@hatchery/core/indexer/editions';
import { forgeRequestsModel } from '@hatchery/core/indexer/forge-requests';
import { listingsModel } from '@hatchery/core/indexer/listings';
import { nftsModel } from '@hatchery/core/indexer/nfts';
import { referralInfoSchema } from '@hatchery/core/indexer/referral';
import { salesModel } from '@hatchery/core/indexer/sales';
import { stakingModel } from '@hatchery/core/indexer/staking';
import { itemSchema } from '@hatchery/core/query/item-schema';
import { summarySchema } from '@hatchery/core/indexer/summary';
import { negotiateResponseSchema } from '@hatchery/platform/signalr/protocol';
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
 * no handler imports (a list's item is built here from its read model's
 * declaration, by core/query/item-schema.ts): a bundle leaves out a module it
 * takes nothing from, but keeps every statement of a module it takes
 * something from that calls zod. A route with none
 * answers what its handler shapes (HTML, a file, a redirect) or nothing.
 */
export const responses = {
  listEditions: pageSchema(itemSchema(editionsModel)),
  getMe: accountSchema,
  requestWalletNonce: challengeSchema,
  linkWallet: accountSchema,
  unlinkWallet: accountSchema,
  listAccountNfts: pageSchema(itemSchema(nftsModel)),
  listListings: pageSchema(itemSchema(listingsModel)),
  listAccountStaking: pageSchema(itemSchema(stakingModel)),
  listAccountForgeRequests: pageSchema(itemSchema(forgeRequestsModel)),
  getAccountReferral: referralInfoSchema,
  listSales: pageSchema(itemSchema(salesModel)),
  getSummary: summarySchema,
  negotiateHub: negotiateResponseSchema,
  health: healthSchema,
  listEvents: eventPageSchema,
} as const satisfies Partial<Record<HttpRouteName, z.ZodMiniType>>;

/** The success schema of a route, if it has one. */
export const responseOf = (name: string): z.ZodMiniType | undefined => (responses as Partial<Record<string, z.ZodMiniType>>)[name];
