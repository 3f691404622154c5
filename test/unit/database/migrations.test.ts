/**
 * The migrations as source (docs/deploying.md, "Migrations that lose data"):
 * an up step that drops or narrows what users stored says so, statement by
 * statement, and the docs tell the operator what to do first; no migration
 * touches a schema but the service's own.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { migrationsDir, serviceSchema } from '@hatchery/core/migrate';
import { losses, lossMarker, readMigrations, schemasNamed, statements, upStepLosses } from './migration-sql';

const fixtures = new URL('./fixtures/migrations', import.meta.url).pathname;
const deployingDocs = readFileSync(new URL('../../../docs/deploying.md', import.meta.url), 'utf8');

const lossesOf = async (sql: string) => (await statements(sql)).flatMap((statement) => losses(statement.node));

describe('migrations', () => {
  it('mark every statement of an up step that loses data, and docs/deploying.md names each such migration', async () => {
    const found = (await Promise.all(readMigrations(migrationsDir).map(upStepLosses))).flat();
    expect(found.filter((loss) => !loss.marked)).toEqual([]);
    for (const file of new Set(found.map((loss) => loss.file))) expect(deployingDocs, `docs/deploying.md says nothing of ${file}`).toContain(file);
  });

  it('catch a new migration whose up step drops a column without the marker, and let it pass once marked', async () => {
    const [fixture] = readMigrations(fixtures);
    expect(await upStepLosses(fixture!)).toEqual([
      {
        file: '1799000000000_drop_nickname.sql',
        statement: 'ALTER TABLE hatchery.accounts DROP COLUMN nickname',
        loses: 'drops the column nickname of hatchery.accounts',
        marked: false,
      },
    ]);
    const marked = {
      ...fixture!,
      up: fixture!.up.replace('ALTER TABLE', `${lossMarker} every player's nickname (export it first: docs/deploying.md)\nALTER TABLE`),
    };
    expect((await upStepLosses(marked)).map((loss) => loss.marked)).toEqual([true]);
  });

  it('tell a statement that loses data from one that does not, as PostgreSQL parses it', async () => {
    const losing: Record<string, string[]> = {
      'DROP TABLE hatchery.wallet_challenges': ['drops hatchery.wallet_challenges'],
      'DROP SCHEMA hatchery CASCADE': ['drops hatchery and what depends on it'],
      'DROP SEQUENCE hatchery.market_version': ['drops hatchery.market_version'],
      'DROP FUNCTION hatchery.touch_updated_at() CASCADE': ['drops hatchery.touch_updated_at and what depends on it'],
      'TRUNCATE hatchery.accounts': ['empties hatchery.accounts'],
      'DELETE FROM hatchery.accounts': ['deletes every row of hatchery.accounts'],
      "DELETE FROM hatchery.accounts WHERE status = 'DISABLED'": ['deletes rows of hatchery.accounts'],
      "UPDATE hatchery.accounts SET nickname = ''": ['rewrites every row of hatchery.accounts'],
      'ALTER TABLE hatchery.accounts ALTER COLUMN email TYPE varchar(20)': ['changes the type of hatchery.accounts.email, which can narrow it'],
      'ALTER TABLE hatchery.accounts ADD COLUMN avatar text, DROP COLUMN wallet_linked_at': ['drops the column wallet_linked_at of hatchery.accounts'],
      'DO $$ BEGIN EXECUTE format($f$DROP TABLE %I.accounts$f$, current_schema()); END $$': ['runs a DO block that drops, alters or writes'],
    };
    const keeping = [
      'CREATE TABLE hatchery.avatars (account_id text PRIMARY KEY, url text NOT NULL)',
      'ALTER TABLE hatchery.accounts ADD COLUMN avatar text',
      'CREATE INDEX accounts_created_at ON hatchery.accounts (created_at)',
      'DROP INDEX hatchery.accounts_created_at',
      'DROP TRIGGER accounts_touch ON hatchery.accounts',
      "UPDATE hatchery.accounts SET status = 'ACTIVE' WHERE status IS NULL",
      "DO $$ BEGIN RAISE NOTICE 'checked'; END $$",
    ];
    for (const [sql, expected] of Object.entries(losing)) expect(await lossesOf(sql), sql).toEqual(expected);
    for (const sql of keeping) expect(await lossesOf(sql), sql).toEqual([]);
  });

  it(`name no schema but the service’s own (${serviceSchema}), so none creates, alters or writes the indexer’s`, async () => {
    for (const migration of readMigrations(migrationsDir))
      for (const { text, node } of await statements(`${migration.up}\n${migration.down}`))
        expect(
          [...schemasNamed(node)].filter((schema) => schema !== serviceSchema),
          `${migration.file}: ${text}`,
        ).toEqual([]);
    const [write] = await statements('INSERT INTO indexer.editions (id) VALUES (1)');
    expect([...schemasNamed(write!.node)]).toEqual(['indexer']);
    const [unqualified] = await statements('CREATE TABLE accounts (id text)');
    expect([...schemasNamed(unqualified!.node)]).toEqual(['(unqualified)']);
  });
});
