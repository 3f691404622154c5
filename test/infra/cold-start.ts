import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { CreateTableCommand, DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import * as z from 'zod';
import { createTableInput } from '@hatchery/core/dynamo/table';
import { originVerifyHeader } from '@hatchery/core/origin-verify';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { fanOutHandler, type WsEvent } from '@hatchery/functions/routes/realtime';
import { demoAddress } from '@hatchery/local/demo-data';
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
  via: 'http' | 'hub' | 'fanOut' | 'migrator';
  fn: DeployedFunction;
  taskRoot: string;
  bundle: Bundle;
}

export interface Bundle {
  file: string;
  bytes: number;
  gzipBytes: number;
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
    const dynamo = new DynamoDBClient({ endpoint: backing.dynamoEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await dynamo.send(new CreateTableCommand(createTableInput(tableName))).catch((error: unknown) => {
      if (!(error instanceof ResourceInUseException)) throw error;
    });
    dynamo.destroy();
    const served = new Map<string, { key: string; via: ColdStartTarget['via'] }>();
    for (const [key, { fn }] of routesOf(result, only(result, 'aws:apigatewayv2/api:Api', 'ApiApi'))) served.set(fn.id, { key, via: 'http' });
    for (const [key, { fn }] of routesOf(result, only(result, 'aws:apigatewayv2/api:Api', 'HubApi'))) served.set(fn.id, { key, via: 'hub' });
    return await Promise.all(
      deployedFunctions(result).map(async (fn) => {
        const taskRoot = join(workdir, 'task', fn.id);
        mkdirSync(taskRoot, { recursive: true });
        await run('unzip', ['-q', '-o', fn.build.zip, '-d', taskRoot]);
        const file = join(taskRoot, `${fn.lambda.handler.slice(0, fn.lambda.handler.lastIndexOf('.'))}.mjs`);
        const bytes = statSync(file).size;
        const role = served.get(fn.id) ?? { key: `Function ${fn.id}`, via: fn.build.source === fanOutHandler ? ('fanOut' as const) : ('migrator' as const) };
        return { ...role, fn, taskRoot, bundle: { file, bytes, gzipBytes: gzipSync(readFileSync(file)).length } };
      }),
    );
  } finally {
    rmSync(result.workDir, { recursive: true, force: true });
  }
}

/** Each path parameter's documented example (the route's zod schema), else demo wallet 1; a greedy path matches nothing. */
function pathParameters(route: HttpRoute): Record<string, string> | undefined {
  const names = [...route.path.matchAll(/\{(\w+)(\+?)\}/g)];
  if (!names.length) return undefined;
  const schema = route.request?.params && (z.toJSONSchema(route.request.params, { io: 'input' }) as { properties?: Record<string, { examples?: string[] }> });
  return Object.fromEntries(names.map(([, name, greedy]) => [name!, greedy ? 'no/such/path' : (schema?.properties?.[name!]?.examples?.[0] ?? demoAddress(1))]));
}

/** A request each HTTP function answers without a token. */
export function httpEvent(route: HttpRoute, extraHeaders: Record<string, string> = {}): APIGatewayProxyEventV2 {
  const method = route.method === 'ANY' ? 'GET' : route.method;
  const parameters = pathParameters(route);
  const path = route.path.replace(/\{(\w+)\+?\}/g, (_whole, name: string) => parameters![name]!);
  const rawQueryString = method === 'POST' && route.auth === 'none' ? 'negotiateVersion=1' : '';
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath: path,
    rawQueryString,
    headers: { host: 'api.example.test', 'user-agent': 'cold-start-probe', accept: 'application/json', ...extraHeaders },
    queryStringParameters: rawQueryString ? Object.fromEntries(new URLSearchParams(rawQueryString)) : undefined,
    pathParameters: parameters,
    requestContext: {
      accountId: '123456789012',
      apiId: 'probe',
      domainName: 'api.example.test',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'cold-start-probe' },
      requestId: `probe-${now}`,
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    isBase64Encoded: false,
  };
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

export interface Probe {
  importMs: number;
  invokeMs: number;
  statusCode?: number;
  result?: unknown;
  error?: string;
}

/** Runs in a fresh process, like a new Lambda execution environment: imports the bundle (the init phase), then calls the handler once. */
const probeScript = `
const { pathToFileURL } = await import('node:url');
const { file, exportName, event } = JSON.parse(process.env.PROBE_INPUT);
const started = performance.now();
const module = await import(pathToFileURL(file).href);
const importMs = performance.now() - started;
const context = { awsRequestId: 'probe', functionName: 'probe', functionVersion: '$LATEST', memoryLimitInMB: '1024', callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => 10000 };
const report = { importMs };
try {
  const invoked = performance.now();
  const result = await module[exportName](event, context);
  report.invokeMs = performance.now() - invoked;
  report.statusCode = result?.statusCode;
  report.result = result;
} catch (error) {
  report.error = String(error?.stack ?? error);
}
// Exits once the report is written: a pipe takes a large one (a file's body) in several writes.
process.stdout.write(JSON.stringify(report), () => process.exit(0));
`;

/**
 * Calls one deployed function in a fresh Node.js process, as Lambda would: its
 * task root is the current directory, its environment only what the function
 * was deployed with and what Lambda adds. The AWS endpoints it talks to are
 * the local stack's, named in `overrides`.
 */
export async function probe(target: ColdStartTarget, backing: Backing, options: { event: unknown; overrides?: Record<string, string> }): Promise<Probe> {
  const handler = target.fn.lambda.handler;
  const env = {
    PATH: process.env.PATH ?? '',
    ...target.fn.environment,
    LAMBDA_TASK_ROOT: target.taskRoot,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: backing.dynamoEndpoint,
    LOG_LEVEL: 'silent',
    ...options.overrides,
    PROBE_INPUT: JSON.stringify({ file: target.bundle.file, exportName: handler.slice(handler.lastIndexOf('.') + 1), event: options.event }),
  };
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probeScript], { env, cwd: target.taskRoot, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
  // The function's own lines (its metrics, one EMF line per call) come before the report, which is the last line.
  return JSON.parse(stdout.slice(stdout.lastIndexOf('\n') + 1)) as Probe;
}

/** What CloudFront adds to every request it forwards: the stage's origin-verification secret, as linked to the function. */
export function throughRouter(target: ColdStartTarget): Record<string, string> {
  const secret = target.fn.build.links.OriginVerify?.value;
  return typeof secret === 'string' ? { [originVerifyHeader]: secret } : {};
}

export interface ColdStart {
  key: string;
  handler: string;
  bundle: Bundle;
  probe: Probe;
  expectedStatus?: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Probes `times` fresh processes and reports the median times (the last run's answer), which a busy machine skews less. */
async function probeMedian(times: number, once: () => Promise<Probe>): Promise<Probe> {
  const probes: Probe[] = [];
  for (let i = 0; i < times; i++) probes.push(await once());
  const last = probes.at(-1)!;
  if (probes.some((each) => each.error)) return probes.find((each) => each.error)!;
  return { ...last, importMs: median(probes.map((each) => each.importMs)), invokeMs: median(probes.map((each) => each.invokeMs)) };
}

/**
 * Measures each deployed function's cold start against `backing`, `times`
 * fresh processes per function; the migrator migrates `migrationDatabaseUrl`.
 */
export async function measureColdStarts(backing: Backing, workdir: string, migrationDatabaseUrl: string, times = 1): Promise<ColdStart[]> {
  const targets = await deployForColdStarts(backing, workdir);
  const routes = new Map(Object.values<HttpRoute>(httpRoutes).map((route) => [`${route.method} ${route.path}`, route]));
  const order = (target: ColdStartTarget) => ['http', 'hub', 'fanOut', 'migrator'].indexOf(target.via) * 10 + ['$connect', '$default', '$disconnect'].indexOf(target.key);
  const managementEndpoint = { WEBSOCKET_MANAGEMENT_ENDPOINT: backing.managementEndpoint };
  const rows: ColdStart[] = [];
  for (const target of [...targets].sort((a, b) => order(a) - order(b) || a.key.localeCompare(b.key))) {
    const handler = target.fn.build.source;
    if (target.via === 'http') {
      const route = routes.get(target.key)!;
      const event = httpEvent(route, throughRouter(target));
      const measured = await probeMedian(times, () => probe(target, backing, { event }));
      rows.push({ key: target.key, handler, bundle: target.bundle, probe: measured, expectedStatus: expectedStatus(route) });
    } else if (target.via === 'hub') {
      const event = hubEvent(target.key, throughRouter(target));
      const measured = await probeMedian(times, () => probe(target, backing, { event, overrides: managementEndpoint }));
      rows.push({ key: target.key, handler, bundle: target.bundle, probe: measured, expectedStatus: 200 });
    } else if (target.via === 'fanOut') {
      // One shard of a broadcast, as the listener hands it out; the deployed table holds no connections.
      const event = { shard: 0, frame: '{"type":1,"target":"marketChanged","arguments":[{"count":0,"maxBlock":"0"}]}\u001e' };
      const measured = await probeMedian(times, () => probe(target, backing, { event, overrides: managementEndpoint }));
      rows.push({ key: target.key, handler, bundle: target.bundle, probe: measured });
    } else {
      const measured = await probeMedian(times, () => probe(target, backing, { event: {}, overrides: { DATABASE_URL: migrationDatabaseUrl } }));
      rows.push({ key: target.key, handler, bundle: target.bundle, probe: measured });
    }
  }
  return rows;
}

const kb = (bytes: number) => (bytes / 1024).toFixed(0).padStart(9);
const ms = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(0)).padStart(10);

/** One line per function: bundle size (and gzipped, about its zip), import time (Lambda's init phase) and the first call's time. */
export function printColdStarts(rows: readonly ColdStart[], times = 1): void {
  const runs = times > 1 ? `median of ${times} fresh Node.js ${process.versions.node} processes` : `one fresh Node.js ${process.versions.node} process`;
  console.log(`\nFunction bundles and cold starts (${runs} per function; first call against the local stack)`);
  console.log(`${'function'.padEnd(38)} ${'KB'.padStart(9)} ${'gzip KB'.padStart(9)} ${'import ms'.padStart(10)} ${'1st call'.padStart(10)} ${'status'.padStart(7)}`);
  for (const row of rows) {
    const status = row.probe.statusCode ?? (row.probe.error ? 'error' : 'ok');
    console.log(`${row.key.padEnd(38)} ${kb(row.bundle.bytes)} ${kb(row.bundle.gzipBytes)} ${ms(row.probe.importMs)} ${ms(row.probe.invokeMs)} ${String(status).padStart(7)}`);
  }
}
