-- Up Migration
-- The transparency summary's five totals (indexer/summary-store.ts), exact as of `as_of`: the start of the statement
-- that summed them, by the database's clock. The leading listener keeps the one row fresh, and an instance that finds
-- it older than its cache lifetime sums itself and stores what it summed, so a cold instance reads instead of summing.
CREATE TABLE hatchery.summary (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  sales_count bigint NOT NULL,
  total_volume numeric NOT NULL,
  nft_count bigint NOT NULL,
  edition_count bigint NOT NULL,
  total_token_transferred numeric NOT NULL,
  as_of timestamptz NOT NULL
);

-- Down Migration
DROP TABLE hatchery.summary;
