import { databaseSchema } from '@hatchery/platform/config/database';

let resolved: { raw: string | undefined; schema: string } | undefined;

/**
 * The schema the indexer writes (INDEXER_SCHEMA, default `indexer`). Read
 * from the environment on use rather than through databaseSettings(), which
 * needs DATABASE_URL too: SQL is built by code that runs before it is set
 * (the local stack's own setup, the tools that write demo data).
 */
export function indexerSchema(): string {
  const raw = process.env.INDEXER_SCHEMA || undefined;
  if (!resolved || resolved.raw !== raw) resolved = { raw, schema: databaseSchema.shape.INDEXER_SCHEMA.parse(raw) };
  return resolved.schema;
}

/** A table of the indexer's, schema-qualified and quoted for SQL text. */
export const indexerTable = (table: string) => `"${indexerSchema()}".${table}`;

/** The indexer stores addresses lowercase, so a wallet's rows are found (through its index) by the lowercased form. */
export const indexerAddress = (address: string): string => address.toLowerCase();

/** The channel the indexer NOTIFYs on after each block it indexes live, as Ponder names it. */
export const notificationChannel = () => `${indexerSchema()}_live_query`;

/**
 * `X-Indexed-Block`: the block each chain's data was indexed up to, as
 * `<chainId>=<block>` pairs. A front end that sent a transaction at block N
 * on chain C knows a page includes it once C's block is at least N. Named
 * here, not in freshness.ts, so that CORS exposes it without a database client.
 */
export const indexedBlockHeader = 'x-indexed-block';

/** Beside it, in the same form: each chain's safe and finalized blocks from Ponder's checkpoint (docs/ponder.md). */
export const safeBlockHeader = 'x-safe-block';
export const finalizedBlockHeader = 'x-finalized-block';
