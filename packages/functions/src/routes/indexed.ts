import type { HttpRoute } from '../routes';

/** The public read endpoints over the indexer schema, other than /editions (issue: indexed data). Schemas are filled in by that work. */
export const indexedRoutes = {
  listAccountNfts: {
    method: 'GET',
    path: '/accounts/{address}/nfts',
    handler: 'packages/functions/src/http/list-account-nfts.handler',
    auth: 'none',
    summary: 'NFTs owned by a wallet (staked included, burned excluded), paged.',
  },
  listListings: {
    method: 'GET',
    path: '/marketplace/listings',
    handler: 'packages/functions/src/http/list-listings.handler',
    auth: 'none',
    summary: 'Active marketplace listings, paged.',
  },
  listAccountStaking: {
    method: 'GET',
    path: '/accounts/{address}/staking',
    handler: 'packages/functions/src/http/list-account-staking.handler',
    auth: 'none',
    summary: 'Staked pairs of a wallet, paged.',
  },
  listAccountForgeRequests: {
    method: 'GET',
    path: '/accounts/{address}/forge-requests',
    handler: 'packages/functions/src/http/list-account-forge-requests.handler',
    auth: 'none',
    summary: 'Forge requests of a wallet in every status, paged.',
  },
  getAccountReferral: {
    method: 'GET',
    path: '/accounts/{address}/referral',
    handler: 'packages/functions/src/http/get-account-referral.handler',
    auth: 'none',
    summary: 'Referral code, upline, referred count and balances of a wallet.',
  },
  listSales: {
    method: 'GET',
    path: '/transparency/sales',
    handler: 'packages/functions/src/http/list-sales.handler',
    auth: 'none',
    summary: 'Sales history, paged.',
  },
  getSummary: {
    method: 'GET',
    path: '/transparency/summary',
    handler: 'packages/functions/src/http/get-summary.handler',
    auth: 'none',
    summary: 'Ecosystem totals (cached 30 s).',
  },
} as const satisfies Record<string, HttpRoute>;
