-- Up Migration
-- Names sort by ICU's root collation (query/compile.ts): a server built without ICU stops the deploy here, never a request.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
    RAISE EXCEPTION 'Hatchery needs PostgreSQL built with ICU: the collation "und-x-icu" is missing';
  END IF;
END $$;

-- Down Migration
