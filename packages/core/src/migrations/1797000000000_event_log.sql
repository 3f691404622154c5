-- Up Migration
-- The event log (docs/webhooks.md): written by the leading listener alone (events/log-writer.ts), read by
-- GET /events, the webhooks' dispatch and the hub's client.
CREATE TABLE hatchery.events (
  -- The cursor: the state row's counter plus one, so it only grows and has no holes.
  position bigint PRIMARY KEY,
  type text NOT NULL,
  chain_id bigint,
  block numeric(78,0) NOT NULL,
  entity text NOT NULL,
  wallets text[] NOT NULL,
  payload jsonb NOT NULL,
  -- On a `.reverted` event: the position of the event it retracts.
  reverts bigint,
  -- On a retracted event: the position of the `.reverted` that retracts it.
  reverted_by bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_type_position_idx ON hatchery.events (type, position);
CREATE INDEX events_wallets_idx ON hatchery.events USING gin (wallets);
CREATE INDEX events_created_at_idx ON hatchery.events (created_at);
-- The events a reorg can still retract: what the writer compares, and where a finality's covered prefix ends.
CREATE INDEX events_open_idx ON hatchery.events (block, position) WHERE reverted_by IS NULL AND reverts IS NULL;

-- The log's one row of state: the last position written, and the block at or below which rows never change.
CREATE TABLE hatchery.event_log (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  last_position bigint NOT NULL,
  final_block numeric(78,0) NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The owners the log last reported: the nfts table has no block column to compare above.
CREATE TABLE hatchery.event_nft_owners (
  token_id numeric(78,0) PRIMARY KEY,
  owner text NOT NULL
);

-- Each webhook endpoint's dispatch: the last position handed to its queue.
CREATE TABLE hatchery.webhook_dispatch (
  endpoint text PRIMARY KEY,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE hatchery.webhook_dispatch;
DROP TABLE hatchery.event_nft_owners;
DROP TABLE hatchery.event_log;
DROP TABLE hatchery.events;
