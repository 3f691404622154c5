import * as z from '../schema';
import { settingsReader } from './environment';
import { wholeNumber } from './fields';

/** The database and the schema the indexer writes in it. */
export const databaseSchema = z.object({
  DATABASE_URL: z.url(),
  DATABASE_POOL_MAX: wholeNumber(10),
  /**
   * The schema the indexer writes, Ponder's `--schema` or `--views-schema`; its channel is `<schema>_live_query`,
   * as Ponder names it. Lowercase, and short enough that the channel stays within PostgreSQL's 63-byte names.
   */
  INDEXER_SCHEMA: z._default(
    z.string().check(z.regex(/^[a-z_][a-z0-9_]{0,51}$/, 'a lowercase PostgreSQL name of at most 52 characters (letters, digits, _)')),
    'indexer',
  ),
  DATABASE_SSL: z.pipe(
    z._default(z.enum(['true', 'false']), 'false'),
    z.transform((value: 'true' | 'false') => value === 'true'),
  ),
});

export const databaseSettings = settingsReader(databaseSchema);
