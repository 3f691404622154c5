import { readFile } from 'node:fs/promises';
import type { Queryable } from '../db';

const schemaFile = new URL('./schema.sql', import.meta.url);

/** Creates the indexer's tables and indexes as Ponder lays them out (for local use, tests and benchmarks). */
export async function createIndexerSchema(client: Queryable): Promise<void> {
  await client.query(await readFile(schemaFile, 'utf8'));
}

export async function dropIndexerSchema(client: Queryable): Promise<void> {
  await client.query('DROP SCHEMA IF EXISTS indexer CASCADE');
}
