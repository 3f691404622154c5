-- Up Migration
CREATE TABLE hatchery.accounts (
  id text PRIMARY KEY,
  email text NOT NULL,
  nickname text NOT NULL,
  status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'DISABLED')),
  wallet_address text,
  wallet_linked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT accounts_email_key UNIQUE (email),
  CONSTRAINT accounts_wallet_address_key UNIQUE (wallet_address),
  CONSTRAINT accounts_wallet_address_lowercase CHECK (wallet_address ~ '^0x[0-9a-f]{40}$')
);

CREATE TABLE hatchery.wallet_challenges (
  account_id text PRIMARY KEY REFERENCES hatchery.accounts (id) ON DELETE CASCADE,
  nonce text NOT NULL,
  message text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Audit timestamps are set by the database so that no code path can forget them.
CREATE FUNCTION hatchery.touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;

CREATE TRIGGER accounts_touch BEFORE UPDATE ON hatchery.accounts
  FOR EACH ROW EXECUTE FUNCTION hatchery.touch_updated_at();
CREATE TRIGGER wallet_challenges_touch BEFORE UPDATE ON hatchery.wallet_challenges
  FOR EACH ROW EXECUTE FUNCTION hatchery.touch_updated_at();

-- Down Migration
DROP TABLE hatchery.wallet_challenges;
DROP TABLE hatchery.accounts;
DROP FUNCTION hatchery.touch_updated_at();
