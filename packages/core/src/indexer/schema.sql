-- The layout the external Ponder indexer writes (docs/ponder.md).
-- The service only reads it; this file exists for the local stack, tests and benchmarks.
CREATE SCHEMA IF NOT EXISTS indexer;

CREATE TABLE IF NOT EXISTS indexer.listings (
  token_id numeric(78,0) PRIMARY KEY,
  seller text NOT NULL,
  price numeric(78,0) NOT NULL,
  status text NOT NULL,
  edition_id numeric(78,0),
  listed_at_block numeric(78,0) NOT NULL,
  updated_at_block numeric(78,0) NOT NULL,
  tx_hash text NOT NULL
);
CREATE INDEX IF NOT EXISTS listings_seller_idx ON indexer.listings (seller);
CREATE INDEX IF NOT EXISTS listings_status_updated_idx ON indexer.listings (status, updated_at_block);
CREATE INDEX IF NOT EXISTS listings_listed_at_idx ON indexer.listings (listed_at_block);

CREATE TABLE IF NOT EXISTS indexer.nfts (
  token_id numeric(78,0) PRIMARY KEY,
  owner text NOT NULL,
  edition_id numeric(78,0) NOT NULL,
  gender integer NOT NULL,
  nft_name text NOT NULL,
  staked boolean NOT NULL,
  burned boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS nfts_owner_idx ON indexer.nfts (owner);
CREATE INDEX IF NOT EXISTS nfts_edition_idx ON indexer.nfts (edition_id);

CREATE TABLE IF NOT EXISTS indexer.editions (
  edition_id numeric(78,0) PRIMARY KEY,
  name text NOT NULL,
  art_uri text NOT NULL,
  health integer NOT NULL,
  skill integer NOT NULL,
  morale integer NOT NULL,
  rarity integer NOT NULL,
  max_supply numeric(78,0) NOT NULL,
  minted numeric(78,0) NOT NULL,
  mint_start numeric(78,0) NOT NULL,
  mint_end numeric(78,0) NOT NULL,
  price numeric(78,0) NOT NULL,
  distribution integer NOT NULL,
  active boolean NOT NULL
);

CREATE TABLE IF NOT EXISTS indexer.staking_pairs (
  pair_id numeric(78,0) PRIMARY KEY,
  staker text NOT NULL,
  male_id numeric(78,0) NOT NULL,
  female_id numeric(78,0) NOT NULL,
  matched boolean NOT NULL,
  staked_at numeric(78,0) NOT NULL,
  last_claim_at numeric(78,0) NOT NULL,
  status text NOT NULL
);
CREATE INDEX IF NOT EXISTS staking_pairs_staker_status_idx ON indexer.staking_pairs (staker, status);

CREATE TABLE IF NOT EXISTS indexer.forge_requests (
  request_id numeric(78,0) PRIMARY KEY,
  buyer text NOT NULL,
  tier integer NOT NULL,
  status text NOT NULL,
  token_id numeric(78,0),
  edition_id numeric(78,0),
  block_number numeric(78,0) NOT NULL,
  fulfilled_at_block numeric(78,0)
);
CREATE INDEX IF NOT EXISTS forge_requests_buyer_idx ON indexer.forge_requests (buyer);
CREATE INDEX IF NOT EXISTS forge_requests_status_fulfilled_idx ON indexer.forge_requests (status, fulfilled_at_block);

CREATE TABLE IF NOT EXISTS indexer.sales (
  id text PRIMARY KEY,
  token_id numeric(78,0) NOT NULL,
  seller text NOT NULL,
  buyer text NOT NULL,
  price numeric(78,0) NOT NULL,
  platform_fee numeric(78,0) NOT NULL,
  royalty numeric(78,0) NOT NULL,
  block_number numeric(78,0) NOT NULL
);
CREATE INDEX IF NOT EXISTS sales_block_idx ON indexer.sales (block_number);
CREATE INDEX IF NOT EXISTS sales_seller_idx ON indexer.sales (seller);
CREATE INDEX IF NOT EXISTS sales_buyer_idx ON indexer.sales (buyer);

CREATE TABLE IF NOT EXISTS indexer.token_transfers (
  id text PRIMARY KEY,
  from_addr text NOT NULL,
  to_addr text NOT NULL,
  value numeric(78,0) NOT NULL,
  block_number numeric(78,0) NOT NULL
);
CREATE INDEX IF NOT EXISTS token_transfers_from_idx ON indexer.token_transfers (from_addr);
CREATE INDEX IF NOT EXISTS token_transfers_to_idx ON indexer.token_transfers (to_addr);

CREATE TABLE IF NOT EXISTS indexer.referral_registrations (
  referrer text PRIMARY KEY,
  code numeric(78,0) NOT NULL,
  block_number numeric(78,0) NOT NULL
);

CREATE TABLE IF NOT EXISTS indexer.referral_links (
  buyer text PRIMARY KEY,
  referrer text NOT NULL,
  block_number numeric(78,0) NOT NULL
);
CREATE INDEX IF NOT EXISTS referral_links_referrer_idx ON indexer.referral_links (referrer);

CREATE TABLE IF NOT EXISTS indexer.referral_bnb_accruals (
  id text PRIMARY KEY,
  referrer text NOT NULL,
  buyer text NOT NULL,
  amount numeric(78,0) NOT NULL,
  block_number numeric(78,0) NOT NULL
);
CREATE INDEX IF NOT EXISTS referral_bnb_accruals_referrer_idx ON indexer.referral_bnb_accruals (referrer);

CREATE TABLE IF NOT EXISTS indexer.referral_bnb_claims (
  id text PRIMARY KEY,
  referrer text NOT NULL,
  amount numeric(78,0) NOT NULL,
  block_number numeric(78,0) NOT NULL
);
CREATE INDEX IF NOT EXISTS referral_bnb_claims_referrer_idx ON indexer.referral_bnb_claims (referrer);
