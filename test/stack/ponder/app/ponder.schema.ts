import { index, onchainTable } from 'ponder';

// The tables Hatchery reads (packages/core/src/indexer/schema.sql), as Ponder creates them: the camelCase keys
// become snake_case columns, t.bigint() is numeric(78,0), t.hex() is text holding lowercase hex. Ponder adds
// NOT NULL only where .notNull() says so (a primary key is NOT NULL anyway).

export const listings = onchainTable(
  'listings',
  (t) => ({
    tokenId: t.bigint().primaryKey(),
    seller: t.hex().notNull(),
    price: t.bigint().notNull(),
    status: t.text().$type<'Active' | 'Cancelled' | 'Sold'>().notNull(),
    editionId: t.bigint(),
    listedAtBlock: t.bigint().notNull(),
    updatedAtBlock: t.bigint().notNull(),
    txHash: t.hex().notNull(),
  }),
  (table) => ({
    seller: index('listings_seller_idx').on(table.seller),
    statusUpdated: index('listings_status_updated_idx').on(table.status, table.updatedAtBlock),
    listedAt: index('listings_listed_at_idx').on(table.listedAtBlock),
  }),
);

export const nfts = onchainTable(
  'nfts',
  (t) => ({
    tokenId: t.bigint().primaryKey(),
    owner: t.hex().notNull(),
    editionId: t.bigint().notNull(),
    gender: t.integer().notNull(),
    nftName: t.text().notNull(),
    staked: t.boolean().notNull(),
    burned: t.boolean().notNull(),
  }),
  (table) => ({
    owner: index('nfts_owner_idx').on(table.owner),
    edition: index('nfts_edition_idx').on(table.editionId),
  }),
);

export const editions = onchainTable('editions', (t) => ({
  editionId: t.bigint().primaryKey(),
  name: t.text().notNull(),
  artUri: t.text().notNull(),
  health: t.integer().notNull(),
  skill: t.integer().notNull(),
  morale: t.integer().notNull(),
  rarity: t.integer().notNull(),
  maxSupply: t.bigint().notNull(),
  minted: t.bigint().notNull(),
  mintStart: t.bigint().notNull(),
  mintEnd: t.bigint().notNull(),
  price: t.bigint().notNull(),
  distribution: t.integer().notNull(),
  active: t.boolean().notNull(),
}));

export const stakingPairs = onchainTable(
  'staking_pairs',
  (t) => ({
    pairId: t.bigint().primaryKey(),
    staker: t.hex().notNull(),
    maleId: t.bigint().notNull(),
    femaleId: t.bigint().notNull(),
    matched: t.boolean().notNull(),
    stakedAt: t.bigint().notNull(),
    lastClaimAt: t.bigint().notNull(),
    status: t.text().$type<'Staked' | 'Unstaked'>().notNull(),
  }),
  (table) => ({
    stakerStatus: index('staking_pairs_staker_status_idx').on(table.staker, table.status),
  }),
);

export const forgeRequests = onchainTable(
  'forge_requests',
  (t) => ({
    requestId: t.bigint().primaryKey(),
    buyer: t.hex().notNull(),
    tier: t.integer().notNull(),
    status: t.text().$type<'Requested' | 'Fulfilled' | 'Cancelled'>().notNull(),
    tokenId: t.bigint(),
    editionId: t.bigint(),
    blockNumber: t.bigint().notNull(),
    fulfilledAtBlock: t.bigint(),
  }),
  (table) => ({
    buyer: index('forge_requests_buyer_idx').on(table.buyer),
    statusFulfilled: index('forge_requests_status_fulfilled_idx').on(table.status, table.fulfilledAtBlock),
  }),
);

export const sales = onchainTable(
  'sales',
  (t) => ({
    id: t.text().primaryKey(),
    tokenId: t.bigint().notNull(),
    seller: t.hex().notNull(),
    buyer: t.hex().notNull(),
    price: t.bigint().notNull(),
    platformFee: t.bigint().notNull(),
    royalty: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
  }),
  (table) => ({
    block: index('sales_block_idx').on(table.blockNumber),
    seller: index('sales_seller_idx').on(table.seller),
    buyer: index('sales_buyer_idx').on(table.buyer),
  }),
);

export const tokenTransfers = onchainTable(
  'token_transfers',
  (t) => ({
    id: t.text().primaryKey(),
    fromAddr: t.hex().notNull(),
    toAddr: t.hex().notNull(),
    value: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
  }),
  (table) => ({
    from: index('token_transfers_from_idx').on(table.fromAddr),
    to: index('token_transfers_to_idx').on(table.toAddr),
  }),
);

export const referralRegistrations = onchainTable('referral_registrations', (t) => ({
  referrer: t.hex().primaryKey(),
  code: t.bigint().notNull(),
  blockNumber: t.bigint().notNull(),
}));

export const referralLinks = onchainTable(
  'referral_links',
  (t) => ({
    buyer: t.hex().primaryKey(),
    referrer: t.hex().notNull(),
    blockNumber: t.bigint().notNull(),
  }),
  (table) => ({
    referrer: index('referral_links_referrer_idx').on(table.referrer),
  }),
);

export const referralBnbAccruals = onchainTable(
  'referral_bnb_accruals',
  (t) => ({
    id: t.text().primaryKey(),
    referrer: t.hex().notNull(),
    buyer: t.hex().notNull(),
    amount: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
  }),
  (table) => ({
    referrer: index('referral_bnb_accruals_referrer_idx').on(table.referrer),
  }),
);

export const referralBnbClaims = onchainTable(
  'referral_bnb_claims',
  (t) => ({
    id: t.text().primaryKey(),
    referrer: t.hex().notNull(),
    amount: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
  }),
  (table) => ({
    referrer: index('referral_bnb_claims_referrer_idx').on(table.referrer),
  }),
);
