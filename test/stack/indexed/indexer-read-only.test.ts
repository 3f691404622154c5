/**
 * The service never writes the indexer's schema (docs/deploying.md, "Pointing
 * at an existing indexer database"). The whole stack (its migrations, every
 * route, the wallet flow, the listener following the indexer's writes) runs as
 * a PostgreSQL role that may only read that schema, as a platform team grants
 * it: a write there from any of those paths is refused by PostgreSQL and
 * fails the answer or the event that made it.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { indexerSchema } from '@hatchery/core/indexer/names';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { demoAddress, demoSizes, loadDemoData } from '@hatchery/local/demo-data';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import { indexerActivity } from '@hatchery/local/simulate';
import { startStack, type RunningStack } from '@hatchery/local/stack';
import { client, freshCaller } from '../accounts/support';
import type { TestStack } from '../../support/stack';

const serviceRole = 'hatchery_service';

let dataDir: string;
let postgres: EmbeddedDatabase;
let indexer: pg.Pool;
let stack: RunningStack;
const answers: { route: string; status: number }[] = [];
let versionBefore = 0;
let versionAfter = 0;

/** The database as the service's role. */
function serviceUrl(): string {
  const url = new URL(postgres.tcpUrl);
  url.username = serviceRole;
  url.password = 'service';
  return url.href;
}

/** A path of the route table with its parameter filled in: a demo wallet that owns things. */
const concrete = (route: HttpRoute) => route.path.replace('{address}', demoAddress(1));

beforeAll(async () => {
  Object.assign(process.env, { LOG_LEVEL: 'silent', IP_RATE_LIMIT_PER_SECOND: '0' });
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-read-only-'));
  await chmod(dataDir, 0o755);
  postgres = await startEmbeddedPostgres({ dataDir, persistent: false, templateDir: inject('postgresTemplateDir') });
  indexer = new pg.Pool({ connectionString: postgres.url, max: 2 });
  // An idle client ended by the server (the stack's or the cluster's shutdown) is no failure of the test.
  indexer.on('error', () => undefined);
  await loadDemoData(indexer, demoSizes.demo);
  const schema = pg.escapeIdentifier(indexerSchema());
  await indexer.query(`CREATE ROLE ${serviceRole} LOGIN PASSWORD 'service'`);
  // What docs/deploying.md asks of the platform team: create the service's own schema, read the indexer's.
  await indexer.query(`GRANT CREATE ON DATABASE postgres TO ${serviceRole}`);
  await indexer.query(`GRANT USAGE ON SCHEMA ${schema} TO ${serviceRole}`);
  await indexer.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${serviceRole}`);
  stack = await startStack({
    port: 0,
    dataDir: join(dataDir, 'stack'),
    persistent: false,
    databaseUrl: serviceUrl(),
    demoData: false,
    listener: { pollMs: 50 },
  });

  for (const route of Object.values<HttpRoute>(httpRoutes).filter(
    (each) => each.method === 'GET' && !each.path.includes('{proxy+}') && !each.path.includes('{asset}') && !each.path.startsWith('/accounts/me'),
  )) {
    const response = await fetch(`${stack.url}${concrete(route)}`);
    answers.push({ route: `GET ${route.path}`, status: response.status });
  }
  const api = await client(stack as unknown as TestStack, freshCaller('read-only'));
  answers.push({ route: 'GET /accounts/me', status: (await api.me()).status });
  const wallet = privateKeyToAccount(generatePrivateKey());
  const challenge = await api.nonce();
  answers.push({ route: 'POST /accounts/me/wallet/nonce', status: challenge.status });
  answers.push({
    route: 'POST /accounts/me/wallet',
    status: (await api.link({ address: wallet.address, signature: await wallet.signMessage({ message: challenge.body.message }), nonce: challenge.body.nonce }))
      .status,
  });
  answers.push({ route: 'DELETE /accounts/me/wallet', status: (await api.unlink()).status });

  // The indexer writes (as its own role) and notifies; the listener, as the service, reads and announces the change.
  const version = async () => Number((await indexer.query<{ last_value: string }>('SELECT last_value FROM hatchery.market_version')).rows[0]!.last_value);
  versionBefore = await version();
  await indexerActivity(indexer).list({ tokenId: '999999', seller: demoAddress(2), price: '1000', block: '99999999' });
  // Waits for the listener's announcement itself; the deadline only ends a wait for one that never comes.
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && (await version()) === versionBefore; ) await sleep(100);
  versionAfter = await version();
}, 120_000);

afterAll(async () => {
  await indexer?.end();
  await stack?.stop();
  await postgres?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the service as a role that may only read the indexer’s schema', () => {
  it('answers every route and links a wallet, and its listener follows the indexer’s writes', () => {
    expect(answers.filter((answer) => answer.status >= 400)).toEqual([]);
    expect(answers.length).toBeGreaterThan(10);
    expect(versionAfter).toBeGreaterThan(versionBefore);
  });

  it('cannot write there: PostgreSQL refuses the role, so no path of the service can', async () => {
    const service = new pg.Client({ connectionString: serviceUrl() });
    await service.connect();
    try {
      await expect(service.query(`DELETE FROM "${indexerSchema()}".sales`)).rejects.toMatchObject({ code: '42501' });
      await expect(service.query(`CREATE TABLE "${indexerSchema()}".scratch (id int)`)).rejects.toMatchObject({ code: '42501' });
      expect((await service.query(`SELECT count(*)::int AS n FROM "${indexerSchema()}".sales`)).rows[0].n).toBeGreaterThan(0);
    } finally {
      await service.end();
    }
  });
});
