import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateTableCommand, DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { createTableInput } from '@hatchery/platform/aws/table';
import { originVerifyHeader } from '@hatchery/functions/origin-verify';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { fanOutHandler, type WsEvent } from '@hatchery/functions/routes/realtime';
import { bundleOf, httpEvent, probe, type Bundle, type Probe } from '../support/bundles';
import { floorRatioGoal, sizeBudget, sizeBudgets, verdict, type FunctionRole } from '../support/budgets';
import { libraryFloors, type LibraryFloor } from './library-floor';
import { buildPgOnlyBaseline, pgOnlyBaselineSummary } from './pg-only';
import { deployedFunctions, only, routesOf, state, type DeployedFunction } from './sst/deployed';
import { runDeploy } from './sst/run';

const run = promisify(execFile);

/** Where the functions run: the local stack's database, DynamoDB API and management API stand in for AWS's. */
export interface Backing {
  databaseUrl: string;
  dynamoEndpoint: string;
  managementEndpoint: string;
  idpProjectId: string;
}

/** A deployed function, with what it serves and the code Lambda would be given, unpacked. */
export interface ColdStartTarget {
  key: string;
  via: FunctionRole;
  fn: DeployedFunction;
  taskRoot: string;
  bundle: Bundle;
}

/**
 * The functions `sst deploy` would create (the real components under Pulumi's
 * mocks, on a stage that uses the local stack's database), each one's code.zip
 * unpacked as Lambda's task root. The deployed table is created in the local
 * DynamoDB API under its deployed name.
 */
export async function deployForColdStarts(backing: Backing, workdir: string): Promise<ColdStartTarget[]> {
  const result = await runDeploy({ stage: 'coldstart', env: { SST_SECRET_DatabaseUrl: backing.databaseUrl, SST_SECRET_IdpProjectId: backing.idpProjectId } });
  try {
    if (result.error) throw new Error(`deploy failed: ${result.error}`);
    const tableName = String(state(only(result, 'aws:dynamodb/table:Table')).name);
    const dynamo = new DynamoDBClient({
      endpoint: backing.dynamoEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await dynamo.send(new CreateTableCommand(createTableInput(tableName))).catch((error: unknown) => {
      if (!(error instanceof ResourceInUseException)) throw error;
    });
    dynamo.destroy();
    const served = new Map<string, { key: string; via: FunctionRole }>();
    for (const [key, { fn }] of routesOf(result, only(result, 'aws:apigatewayv2/api:Api', 'ApiApi'))) served.set(fn.id, { key, via: 'http' });
    for (const [key, { fn }] of routesOf(result, only(result, 'aws:apigatewayv2/api:Api', 'HubApi'))) served.set(fn.id, { key, via: 'hub' });
    return await Promise.all(
      deployedFunctions(result).map(async (fn) => {
        const taskRoot = join(workdir, 'task', fn.id);
        mkdirSync(taskRoot, { recursive: true });
        await run('unzip', ['-q', '-o', fn.build.zip, '-d', taskRoot]);
        const role = served.get(fn.id) ?? { key: `Function ${fn.id}`, via: unservedRole(fn) };
        return { ...role, fn, taskRoot, bundle: bundleOf(join(taskRoot, `${fn.lambda.handler.slice(0, fn.lambda.handler.lastIndexOf('.'))}.mjs`)) };
      }),
    );
  } finally {
    rmSync(result.workDir, { recursive: true, force: true });
  }
}

/** The migrator's sst.aws.Function name (infra/migrations.ts). */
export const migratorId = 'Migrator';

/** A function no route serves: the fan-out function, the migrator, or one this code does not know. */
function unservedRole(fn: DeployedFunction): FunctionRole {
  if (fn.build.source === fanOutHandler) return 'fanOut';
  return fn.id === migratorId ? 'migrator' : 'other';
}

/** The status a request without a token gets: 401 where a token is required, the catch-all's 404, a preflight's 204, else 200. */
export function expectedStatus(route: HttpRoute): number {
  if (route.auth === 'jwt') return 401;
  if (route.method === 'ANY') return 404;
  if (route.method === 'OPTIONS') return 204;
  return 200;
}

const connectionId = 'ColdStartProbe1=';

/** A hub event as API Gateway's WebSocket API sends it: $default carries the SignalR handshake. */
export function hubEvent(routeKey: string, extraHeaders: Record<string, string> = {}): WsEvent {
  const eventType = ({ $connect: 'CONNECT', $disconnect: 'DISCONNECT', $default: 'MESSAGE' } as const)[routeKey as '$connect'];
  const now = Date.now();
  return {
    requestContext: {
      routeKey,
      eventType,
      extendedRequestId: `probe-${now}`,
      requestTime: new Date(now).toUTCString(),
      messageDirection: 'IN',
      stage: '$default',
      connectedAt: now,
      requestTimeEpoch: now,
      identity: { sourceIp: '192.0.2.1', userAgent: 'cold-start-probe' },
      requestId: `probe-${now}`,
      domainName: 'hub.example.test',
      connectionId,
      apiId: 'probe',
    },
    ...(routeKey === '$connect' && { headers: { Host: 'hub.example.test', ...extraHeaders } }),
    ...(routeKey === '$default' && { body: '{"protocol":"json","version":1}\u001e' }),
    isBase64Encoded: false,
  } as WsEvent;
}

/** A bundle to probe: its file and export, the directory Lambda would unpack it in, what the function is deployed with. */
export interface ProbeTarget {
  file: string;
  exportName: string;
  taskRoot: string;
  environment: Record<string, string>;
}

/** Imports and calls one bundle in a fresh Node.js process whose environment is `environment`, PATH and what Lambda adds. */
export async function probeBundle(target: ProbeTarget, backing: Backing, options: { event: unknown; overrides?: Record<string, string> }): Promise<Probe> {
  const env = {
    ...target.environment,
    LAMBDA_TASK_ROOT: target.taskRoot,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: backing.dynamoEndpoint,
    LOG_LEVEL: 'silent',
    ...options.overrides,
  };
  return (await probe(target, options.event, env, { cwd: target.taskRoot })).probe;
}

/**
 * Calls one deployed function in a fresh Node.js process, as Lambda would: its
 * task root is the current directory, its environment only what the function
 * was deployed with and what Lambda adds. The AWS endpoints it talks to are
 * the local stack's, named in `overrides`.
 */
export function probeTarget(target: ColdStartTarget, backing: Backing, options: { event: unknown; overrides?: Record<string, string> }): Promise<Probe> {
  const handler = target.fn.lambda.handler;
  const exportName = handler.slice(handler.lastIndexOf('.') + 1);
  return probeBundle({ file: target.bundle.file, exportName, taskRoot: target.taskRoot, environment: target.fn.environment }, backing, options);
}

/** What CloudFront adds to every request it forwards: the stage's origin-verification secret, as linked to the function. */
export function throughRouter(target: ColdStartTarget): Record<string, string> {
  const secret = target.fn.build.links.OriginVerify?.value;
  return typeof secret === 'string' ? { [originVerifyHeader]: secret } : {};
}

export interface ColdStart {
  key: string;
  /** What the function does (absent for a bundle probed on its own). */
  via?: FunctionRole;
  handler: string;
  bundle: Bundle;
  probe: Probe;
  expectedStatus?: number;
  /**
   * Its library floor (library-floor.ts), probed beside it in each round, when asked for; `ratio` is the median of the
   * rounds' ratios of its import to the median of the round's probes of its floor (one beside each function sharing it).
   */
  floor?: { libraries: string[]; bundle: Bundle; probe: Probe; ratio: number };
}

export interface ColdStarts {
  functions: ColdStart[];
  /** The pg-only bundle of GET /editions' page query, probed in the same rounds, when asked for. */
  baseline?: ColdStart;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The median times of several fresh processes (the last run's answer), which a busy machine skews less; or the first failure. */
function medianProbe(probes: readonly Probe[]): Probe {
  const failed = probes.find((each) => each.error);
  if (failed) return failed;
  return { ...probes.at(-1)!, importMs: median(probes.map((each) => each.importMs)), firstCallMs: median(probes.map((each) => each.firstCallMs)) };
}

/** One function's probe, and what its row records once measured. */
interface Measurement {
  once: () => Promise<Probe>;
  row: Omit<ColdStart, 'probe'>;
}

/**
 * Measures each deployed function's cold start against `backing`, `times`
 * fresh processes per function, in rounds (every function once per round), so
 * a machine that gets busier during the run weighs on every function alike;
 * the migrator migrates `migrationDatabaseUrl`. With `baseline`, the pg-only
 * bundle (pg-only.ts) is probed in the same rounds.
 */
export async function measureColdStarts(
  backing: Backing,
  workdir: string,
  migrationDatabaseUrl: string,
  times = 1,
  options: { baseline?: boolean; floors?: boolean } = {},
): Promise<ColdStarts> {
  const targets = await deployForColdStarts(backing, workdir);
  const routes = new Map(Object.values<HttpRoute>(httpRoutes).map((route) => [`${route.method} ${route.path}`, route]));
  const order = (target: ColdStartTarget) =>
    ['http', 'hub', 'fanOut', 'migrator', 'other'].indexOf(target.via) * 10 + ['$connect', '$default', '$disconnect'].indexOf(target.key);
  const managementEndpoint = { WEBSOCKET_MANAGEMENT_ENDPOINT: backing.managementEndpoint };
  const measurements: Measurement[] = [];
  for (const target of [...targets].sort((a, b) => order(a) - order(b) || a.key.localeCompare(b.key))) {
    const row = { key: target.key, via: target.via, handler: target.fn.build.source, bundle: target.bundle };
    if (target.via === 'http') {
      const route = routes.get(target.key)!;
      const event = httpEvent(route, { headers: throughRouter(target) });
      measurements.push({ once: () => probeTarget(target, backing, { event }), row: { ...row, expectedStatus: expectedStatus(route) } });
    } else if (target.via === 'hub') {
      const event = hubEvent(target.key, throughRouter(target));
      measurements.push({ once: () => probeTarget(target, backing, { event, overrides: managementEndpoint }), row: { ...row, expectedStatus: 200 } });
    } else if (target.via === 'fanOut') {
      // One shard of a broadcast, as the listener hands it out; the deployed table holds no connections.
      const event = { event: 'cold-start', shard: 0, frame: '{"type":1,"target":"marketChanged","arguments":[{"count":0,"maxBlock":"0"}]}\u001e' };
      measurements.push({ once: () => probeTarget(target, backing, { event, overrides: managementEndpoint }), row });
    } else {
      measurements.push({ once: () => probeTarget(target, backing, { event: {}, overrides: { DATABASE_URL: migrationDatabaseUrl } }), row });
    }
  }
  let baseline: Measurement | undefined;
  if (options.baseline) {
    const editions = targets.find((target) => target.key === `${httpRoutes.listEditions.method} ${httpRoutes.listEditions.path}`);
    if (!editions) throw new Error('the deploy has no GET /editions function to take the pg-only baseline’s configuration from');
    const built = await buildPgOnlyBaseline(join(workdir, 'pg-only'), editions.fn.environment.INDEXER_SCHEMA);
    const environment = { DATABASE_URL: backing.databaseUrl };
    baseline = {
      once: () => probeBundle({ ...built, environment }, backing, { event: httpEvent(httpRoutes.listEditions) }),
      row: { key: pgOnlyBaselineKey, handler: built.file, bundle: built.bundle },
    };
  }
  // Each function's floor, but the migrator's: it runs once per deploy, never in a user's request.
  const floored = options.floors ? measurements.filter((measurement) => measurement.row.via !== 'migrator') : [];
  const floors = await libraryFloors([...new Set(floored.map((measurement) => measurement.row.handler))], join(workdir, 'floors'));
  const probeFloor = (floor: LibraryFloor) => probeBundle({ ...floor, environment: { DATABASE_URL: backing.databaseUrl } }, backing, { event: {} });
  const all = [...(baseline ? [baseline] : []), ...measurements];
  const floorOf = all.map((measurement) => (floored.includes(measurement) ? floors.get(measurement.row.handler) : undefined));
  const probes = all.map(() => [] as Probe[]);
  // A function's floor is probed beside it in every round, so each round gives a ratio of two imports a moment apart;
  // the two take turns going first, so that whatever favours the first or the second of a pair weighs on both alike.
  const floorProbes = all.map(() => [] as Probe[]);
  for (let round = 0; round < times; round++)
    for (const [index, measurement] of all.entries()) {
      const floor = floorOf[index];
      if (floor && round % 2 === 1) floorProbes[index]!.push(await probeFloor(floor));
      probes[index]!.push(await measurement.once());
      if (floor && round % 2 === 0) floorProbes[index]!.push(await probeFloor(floor));
    }
  // Functions with the same libraries share one floor bundle, so each round probed it once beside each of them: a
  // function's ratio in a round is taken against all of that round's probes of its floor (their median), not the one
  // beside it alone, which leaves one fast or slow floor process less weight.
  const rows = all.map((measurement, index): ColdStart => {
    const row = { ...measurement.row, probe: medianProbe(probes[index]!) };
    const floor = floorOf[index];
    if (!floor) return row;
    // By function sharing the floor, then by round.
    const shared = floorProbes.filter((_each, other) => floorOf[other] === floor);
    const paired = probes[index]!.map((probe, round) => probe.importMs / median(shared.map((each) => each[round]!.importMs)));
    return { ...row, floor: { libraries: floor.libraries, bundle: floor.bundle, probe: medianProbe(shared.flat()), ratio: median(paired) } };
  });
  const functionRows = rows.slice(baseline ? 1 : 0);
  return baseline ? { baseline: rows[0], functions: functionRows } : { functions: functionRows };
}

export const pgOnlyBaselineKey = 'pg-only baseline';

const kb = (bytes: number) => (bytes / 1024).toFixed(0);
const ms = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(0));

/** What a page answered, where a row's answer is a page: its items' ids and its total, for checking two bundles read the same rows. */
function pageOf(result: unknown): { ids: unknown[]; totalCount: number } | undefined {
  const body = (result as { body?: unknown } | undefined)?.body;
  if (typeof body !== 'string') return undefined;
  try {
    const { items, totalCount } = JSON.parse(body) as { items?: unknown; totalCount?: unknown };
    return Array.isArray(items) && typeof totalCount === 'number' ? { ids: items.map((item) => (item as { id?: unknown }).id), totalCount } : undefined;
  } catch {
    return undefined;
  }
}

/** The budget column: the function's goal and whether its bundle is within it. */
function budgetCell(row: ColdStart): string {
  if (!row.via) return '-';
  const budget = sizeBudget({ role: row.via, key: row.key });
  if (budget === 'exempt') return 'exempt';
  if (!budget) return 'none';
  return `${kb(budget.bytes)}${row.bundle.bytes <= budget.bytes ? '' : ' OVER'}`;
}

/**
 * One line per function: bundle size (and gzipped, about its zip), its size
 * budget, import time (Lambda's init phase) and, with a baseline, its ratio to
 * the pg-only bundle's, and the first call's time; then the goals of test/budgets.json.
 */
export function printColdStarts(rows: readonly ColdStart[], options: { times?: number; baseline?: ColdStart; loadAtStart?: number } = {}): void {
  const { times = 1, baseline, loadAtStart = loadavg()[0]! } = options;
  const runs =
    times > 1 ? `median of ${times} fresh Node.js ${process.versions.node} processes, in rounds` : `one fresh Node.js ${process.versions.node} process`;
  console.log(
    `\nFunction bundles and cold starts (${runs} per function; first call against the local stack; load average ${loadAtStart.toFixed(2)} when it started)`,
  );
  const columns: [string, number][] = [
    ['function', -38],
    ['KB', 6],
    ['gzip KB', 8],
    ['budget KB', 11],
    ['import ms', 10],
    ['import ×', 9],
    ['floor KB', 9],
    ['floor ms', 9],
    ['× floor', 8],
    ['1st call', 9],
    ['status', 8],
  ];
  const line = (cells: string[]) =>
    console.log(cells.map((cell, index) => (columns[index]![1] < 0 ? cell.padEnd(-columns[index]![1]) : cell.padStart(columns[index]![1]))).join(' '));
  line(columns.map(([name]) => name));
  const ratio = (row: ColdStart) => (baseline && !baseline.probe.error && !row.probe.error ? row.probe.importMs / baseline.probe.importMs : undefined);
  const editionsKey = `${httpRoutes.listEditions.method} ${httpRoutes.listEditions.path}`;
  const editions = pageOf(rows.find((row) => row.key === editionsKey)?.probe.result);
  for (const row of baseline ? [baseline, ...rows] : rows) {
    let status = String(row.probe.statusCode ?? (row.probe.error ? 'error' : 'ok'));
    // The baseline must read what GET /editions reads, or its import is no yardstick.
    if (row === baseline && editions && JSON.stringify(pageOf(row.probe.result)) !== JSON.stringify(editions)) status = 'differs';
    const floor = row.floor;
    line([
      row.key,
      kb(row.bundle.bytes),
      kb(row.bundle.gzipBytes),
      budgetCell(row),
      ms(row.probe.importMs),
      ratio(row)?.toFixed(2) ?? '-',
      floor ? kb(floor.bundle.bytes) : '-',
      floor ? ms(floor.probe.importMs) : '-',
      floorRatio(row)?.toFixed(2) ?? '-',
      ms(row.probe.firstCallMs),
      status,
    ]);
  }
  if (baseline) console.log(`(pg-only baseline: ${pgOnlyBaselineSummary}; import × = the function's import / the baseline's)`);
  const floors = new Map(rows.flatMap((row) => (row.floor ? [[row.floor.libraries.join(', '), row.floor] as const] : [])));
  if (floors.size) {
    console.log(
      "(floor = a bundle of only the function's own third-party libraries, constructed at init as it constructs them (test/deploy/library-floor.ts), probed beside the function in each round, each going first in turn; × floor = the median of the rounds' import / the median of that round's probes of the floor, one beside each function sharing it)",
    );
    for (const [libraries, floor] of floors)
      console.log(`  floor ${kb(floor.bundle.bytes).padStart(4)} KB ${ms(floor.probe.importMs).padStart(4)} ms: ${libraries || '(none)'}`);
  }
  printGoals(rows);
}

/** A function's import as a ratio to its library floor's, when both were measured. */
const floorRatio = (row: ColdStart) => (row.floor && !row.floor.probe.error && !row.probe.error ? row.floor.ratio : undefined);

/** The goals beside this run's figures: each size group's largest bundle, every function's import against its floor. */
function printGoals(rows: readonly ColdStart[]): void {
  console.log('Goals (test/budgets.json):');
  const budgeted = rows.flatMap((row) => {
    const budget = row.via && sizeBudget({ role: row.via, key: row.key });
    return budget && budget !== 'exempt' ? [{ row, budget }] : [];
  });
  for (const budget of Object.values(sizeBudgets)) {
    const group = budgeted.filter((each) => each.budget === budget).map((each) => each.row);
    if (!group.length) continue;
    const over = group.filter((row) => row.bundle.bytes > budget.bytes);
    const largest = group.reduce((a, b) => (b.bundle.bytes > a.bundle.bytes ? b : a));
    console.log(
      `  ${`${budget.goal} ≤ ${kb(budget.bytes)} KB`.padEnd(60)} ${verdict(!over.length)}: ${over.length} of ${group.length} over; ${kb(Math.min(...group.map((row) => row.bundle.bytes)))}–${kb(largest.bundle.bytes)} KB (largest ${largest.key})`,
    );
  }
  const floored = rows.flatMap((row) => {
    const ratio = floorRatio(row);
    return ratio === undefined ? [] : [{ row, ratio }];
  });
  if (floored.length) {
    const worst = floored.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    console.log(
      `  ${`every function's import ≤ ${floorRatioGoal}× its library floor's`.padEnd(60)} ${verdict(worst.ratio <= floorRatioGoal)}: ` +
        `${floored.filter((each) => each.ratio > floorRatioGoal).length} of ${floored.length} over; ${Math.min(...floored.map((each) => each.ratio)).toFixed(2)}–${worst.ratio.toFixed(2)}× (largest ${worst.row.key})`,
    );
  }
}
