import { readFile } from 'node:fs/promises';
import type { Queryable } from '../db';
import { indexerSchema } from './names';

const schemaFile = new URL('./schema.sql', import.meta.url);

/**
 * Creates the indexer's tables and indexes as Ponder lays them out (for local
 * use, tests and benchmarks), in the INDEXER_SCHEMA schema: schema.sql names
 * the default, `indexer`, and is read in the setting's name.
 */
export async function createIndexerSchema(client: Queryable): Promise<void> {
  const sql = await readFile(schemaFile, 'utf8');
  await client.query(sql.replaceAll(/\bindexer\b(?=[.;])/g, `"${indexerSchema()}"`));
}

export async function dropIndexerSchema(client: Queryable): Promise<void> {
  await client.query(`DROP SCHEMA IF EXISTS "${indexerSchema()}" CASCADE`);
}
