import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';

export const serviceSchema = 'hatchery';
export const migrationsDir = fileURLToPath(new URL('./migrations', import.meta.url));

/** Applies the service's pending migrations; safe to run at every start (idempotent, advisory-locked). */
export async function migrate(databaseUrl: string, dir: string = migrationsDir): Promise<void> {
  await runner({
    databaseUrl,
    dir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    schema: serviceSchema,
    migrationsSchema: serviceSchema,
    createSchema: true,
    createMigrationsSchema: true,
    checkOrder: true,
    log: () => undefined,
  });
}
