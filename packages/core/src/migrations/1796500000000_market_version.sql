-- Up Migration
-- marketChanged's version (realtime/changes.ts): it only grows, across listener restarts, takeovers and chain reorgs.
CREATE SEQUENCE hatchery.market_version;

-- Down Migration
DROP SEQUENCE hatchery.market_version;
