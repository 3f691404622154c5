import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '@hatchery/core/migrate';
import { demoSizes } from '@hatchery/local/demo-data';
import { startTestStack, type TestStack } from '../support/stack';
import { sizeBudget } from '../support/budgets';
import { measureColdStarts, migratorId, printColdStarts, type ColdStart } from './cold-start';

/**
 * Every function bundled as SST bundles it, then imported and called once in
 * a fresh process whose only configuration is what SST and Lambda give it
 * (the links sealed in SST_KEY_FILE), against the real local stack.
 */
let stack: TestStack;
let workdir: string;
let rows: ColdStart[];
const migrationDatabase = 'migrated_on_deploy';

beforeAll(async () => {
  stack = await startTestStack({ demoData: demoSizes.demo });
  workdir = mkdtempSync(join(tmpdir(), 'hatchery-bundles-'));
  await stack.sql(`CREATE DATABASE ${migrationDatabase}`);
  const migrationUrl = new URL(stack.databaseUrl);
  migrationUrl.pathname = `/${migrationDatabase}`;
  ({ functions: rows } = await measureColdStarts(
    {
      databaseUrl: stack.databaseUrl,
      dynamoEndpoint: stack.dynamoEndpoint,
      managementEndpoint: stack.url,
      idpProjectId: process.env.IDP_PROJECT_ID ?? 'hatchery-local',
    },
    workdir,
    migrationUrl.href,
  ));
  printColdStarts(rows);
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  if (workdir) rmSync(workdir, { recursive: true, force: true });
});

describe('function bundles', () => {
  it('bundles every function into one self-contained file', () => {
    expect(rows.length).toBeGreaterThan(15);
    for (const row of rows) {
      // Lambda takes 50 MB zipped, 250 MB unzipped; a function of this service should stay far below.
      expect(row.bundle.bytes, row.key).toBeLessThan(5 * 1024 * 1024);
      expect(row.probe.error, `${row.key}: ${row.probe.error}`).toBeUndefined();
    }
  });

  it('keeps each function’s bundle within its budget (test/budgets.json; the migrator exempt)', () => {
    const over = rows.flatMap((row) => {
      const budget = sizeBudget({ role: row.via!, key: row.key });
      if (budget === 'exempt') return [];
      if (!budget) return [`${row.key}: a ${row.via} function, which has no budget`];
      return row.bundle.bytes > budget.bytes ? [`${row.key}: ${(row.bundle.bytes / 1024).toFixed(0)} KB > ${budget.bytes / 1024} KB (${budget.goal})`] : [];
    });
    // Only the migrator is exempt: it carries node-pg-migrate and runs once per deploy, never in a request.
    expect(rows.filter((row) => sizeBudget({ role: row.via!, key: row.key }) === 'exempt').map((row) => row.key)).toEqual([`Function ${migratorId}`]);
    expect(over).toEqual([]);
  });

  it('answers each HTTP route from its own bundle: 401 without a token where one is required', () => {
    const http = rows.filter((row) => row.handler.startsWith('packages/functions/src/http/'));
    expect(http.length).toBeGreaterThan(12);
    expect(Object.fromEntries(http.map((row) => [row.key, row.probe.statusCode]))).toEqual(
      Object.fromEntries(http.map((row) => [row.key, row.expectedStatus])),
    );
  });

  it('answers the hub’s $connect, handshake and $disconnect from their bundles', () => {
    const hub = rows.filter((row) => row.key.startsWith('$'));
    expect(hub.map((row) => [row.key, row.probe.statusCode])).toEqual([
      ['$connect', 200],
      ['$default', 200],
      ['$disconnect', 200],
    ]);
  });

  it('migrates an empty database with the migration function and the SQL files copied beside it', async () => {
    const migrator = rows.find((row) => row.key === 'Function Migrator');
    expect(migrator, rows.map((row) => row.key).join(', ')).toBeDefined();
    expect(migrator?.probe.result).toEqual({ migrated: true, attempts: 1 });
    const url = new URL(stack.databaseUrl);
    url.pathname = `/${migrationDatabase}`;
    const client = new pg.Client({ connectionString: url.href });
    await client.connect();
    try {
      const { rows: applied } = await client.query<{ name: string }>('SELECT name FROM hatchery.pgmigrations ORDER BY run_on, id');
      const files = readdirSync(migrationsDir)
        .filter((file) => file.endsWith('.sql'))
        .map((file) => file.replace(/\.sql$/, ''))
        .sort();
      expect(applied.map((row) => row.name)).toEqual(files);
      const { rows: tables } = await client.query(`SELECT to_regclass('hatchery.accounts') IS NOT NULL AS present`);
      expect(tables[0]).toEqual({ present: true });
    } finally {
      await client.end();
    }
  });
});
