import { editionsSource } from '@hatchery/core/indexer/editions';
import { forgeRequestsSource } from '@hatchery/core/indexer/forge-requests';
import { listingsSource } from '@hatchery/core/indexer/listings';
import { nftsSource } from '@hatchery/core/indexer/nfts';
import { salesSource } from '@hatchery/core/indexer/sales';
import { stakingSource } from '@hatchery/core/indexer/staking';
import { minBlockQuerySchema } from '@hatchery/core/indexer/min-block';
import { pageQuerySchema } from '@hatchery/core/query/page-query';
import type { HttpRoute } from '../http-route';
import { addressParams } from '../schemas';

/** Every read of the indexer schema can find its minBlock not indexed yet (409) and the database unavailable (503). */
const problems = [409, 503] as const;

export const listEditions = {
  method: 'GET',
  path: '/editions',
  handler: 'packages/functions/src/http/list-editions.handler',
  auth: 'none',
  summary: 'Editions of the catalog, paged.',
  request: { query: pageQuerySchema },
  list: editionsSource,
  indexed: true,
  problems,
} as const satisfies HttpRoute;

export const listAccountNfts = {
  method: 'GET',
  path: '/accounts/{address}/nfts',
  handler: 'packages/functions/src/http/list-account-nfts.handler',
  auth: 'none',
  summary: 'NFTs owned by a wallet (staked included, burned excluded), paged.',
  request: { query: pageQuerySchema, params: addressParams },
  list: nftsSource,
  indexed: true,
  problems,
} as const satisfies HttpRoute;

export const listListings = {
  method: 'GET',
  path: '/marketplace/listings',
  handler: 'packages/functions/src/http/list-listings.handler',
  auth: 'none',
  summary: 'Active marketplace listings, paged.',
  request: { query: pageQuerySchema },
  list: listingsSource,
  indexed: true,
  problems,
} as const satisfies HttpRoute;

export const listAccountStaking = {
  method: 'GET',
  path: '/accounts/{address}/staking',
  handler: 'packages/functions/src/http/list-account-staking.handler',
  auth: 'none',
  summary: 'Staked pairs of a wallet, paged.',
  request: { query: pageQuerySchema, params: addressParams },
  list: stakingSource,
  indexed: true,
  problems,
} as const satisfies HttpRoute;

export const listAccountForgeRequests = {
  method: 'GET',
  path: '/accounts/{address}/forge-requests',
  handler: 'packages/functions/src/http/list-account-forge-requests.handler',
  auth: 'none',
  summary: 'Forge requests of a wallet in every status, paged.',
  request: { query: pageQuerySchema, params: addressParams },
  list: forgeRequestsSource,
  indexed: true,
  problems,
} as const satisfies HttpRoute;

export const getAccountReferral = {
  method: 'GET',
  path: '/accounts/{address}/referral',
  handler: 'packages/functions/src/http/get-account-referral.handler',
  auth: 'none',
  summary: 'Referral code, upline, referred count and balances of a wallet.',
  request: { query: minBlockQuerySchema, params: addressParams },
  indexed: true,
  problems,
} as const satisfies HttpRoute;

export const listSales = {
  method: 'GET',
  path: '/transparency/sales',
  handler: 'packages/functions/src/http/list-sales.handler',
  auth: 'none',
  summary: 'Sales history, paged.',
  request: { query: pageQuerySchema },
  list: salesSource,
  indexed: true,
  problems,
} as const satisfies HttpRoute;

export const getSummary = {
  method: 'GET',
  path: '/transparency/summary',
  handler: 'packages/functions/src/http/get-summary.handler',
  auth: 'none',
  summary: 'Ecosystem totals (cached 30 s).',
  request: { query: minBlockQuerySchema },
  indexed: true,
  problems,
} as const satisfies HttpRoute;

/** The public reads over the indexer schema. */
export const indexedRoutes = {
  listEditions,
  listAccountNfts,
  listListings,
  listAccountStaking,
  listAccountForgeRequests,
  getAccountReferral,
  listSales,
  getSummary,
} as const satisfies Record<string, HttpRoute>;
