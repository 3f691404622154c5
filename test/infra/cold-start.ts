import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { build } from 'esbuild';
import * as z from 'zod';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import type { WsEvent } from '@hatchery/functions/routes/realtime';
import { demoAddress } from '@hatchery/local/demo-data';
import { installSstFakes, type DeployedFunction } from './fakes';
import { handlerSource, lambdaEnvironment, repositoryRoot } from './sst-env';

const run = promisify(execFile);

/** Where the functions run: the local stack's database, DynamoDB API and management API stand in for AWS's. */
export interface Backing {
  databaseUrl: string;
  dynamoEndpoint: string;
  managementEndpoint: string;
  tableName: string;
  idpProjectId: string;
}

/** The functions sst.config.ts deploys, recorded with the fakes, their links pointing at `backing`. */
export async function deployedFunctions(backing: Backing): Promise<DeployedFunction[]> {
  const secrets = { DatabaseUrl: backing.databaseUrl, IdpProjectId: backing.idpProjectId };
  const names = Object.keys(secrets).map((name) => `SST_SECRET_${name}`);
  Object.assign(process.env, Object.fromEntries(Object.entries(secrets).map(([name, value]) => [`SST_SECRET_${name}`, value])));
  try {
    const recording = installSstFakes({ physicalNames: { Table: backing.tableName }, hubManagementEndpoint: backing.managementEndpoint });
    const { default: app } = await import('../../sst.config');
    await app.run();
    return recording.functions;
  } finally {
    for (const name of names) delete process.env[name];
  }
}

export interface Bundle {
  file: string;
  bytes: number;
  gzipBytes: number;
}

/**
 * Bundles every handler as SST's Node.js runtime does (pkg/runtime/node/build.go):
 * one self-contained ESM file per function, platform node, target esnext,
 * minified with names kept, `module` before `main`, only sharp and pg-native
 * left out, and a banner giving ESM code `require`, `__filename` and
 * `__dirname`. The AWS SDK is bundled too, as SST does by default, so each
 * function carries exactly the SDK version it was tested with.
 */
export async function bundleHandlers(handlers: readonly string[], outdir: string): Promise<Map<string, Bundle>> {
  const entries = [...new Set(handlers)].map((handler) => {
    const { file } = handlerSource(handler);
    return { handler, in: join(repositoryRoot, file), out: file.replace(/\.ts$/, '') };
  });
  await build({
    entryPoints: entries.map(({ in: input, out }) => ({ in: input, out })),
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'esnext',
    mainFields: ['module', 'main'],
    external: ['sharp', 'pg-native'],
    minify: true,
    keepNames: true,
    sourcemap: false,
    logLevel: 'silent',
    banner: {
      js: [
        `import { createRequire as topLevelCreateRequire } from 'module';`,
        `const require = topLevelCreateRequire(import.meta.url);`,
        `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
        `const __filename = topLevelFileUrlToPath(import.meta.url)`,
        `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
      ].join('\n'),
    },
  });
  return new Map(
    entries.map(({ handler, out }) => {
      const file = join(outdir, `${out}.mjs`);
      return [handler, { file, bytes: statSync(file).size, gzipBytes: gzipSync(readFileSync(file)).length }];
    }),
  );
}

/** Each path parameter's documented example (the route's zod schema), else demo wallet 1; a greedy path matches nothing. */
function pathParameters(route: HttpRoute): Record<string, string> | undefined {
  const names = [...route.path.matchAll(/\{(\w+)(\+?)\}/g)];
  if (!names.length) return undefined;
  const schema = route.request?.params && (z.toJSONSchema(route.request.params, { io: 'input' }) as { properties?: Record<string, { examples?: string[] }> });
  return Object.fromEntries(names.map(([, name, greedy]) => [name!, greedy ? 'no/such/path' : (schema?.properties?.[name!]?.examples?.[0] ?? demoAddress(1))]));
}

/** A request each HTTP function answers without a token. */
export function httpEvent(route: HttpRoute): APIGatewayProxyEventV2 {
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
    headers: { host: 'api.example.test', 'user-agent': 'cold-start-probe', accept: 'application/json' },
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
export function hubEvent(routeKey: string): WsEvent {
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
    ...(routeKey === '$connect' && { headers: { Host: 'hub.example.test' } }),
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

/** Imports and calls one bundle in a fresh Node.js process whose environment is only what SST and Lambda would give it. */
export async function probe(fn: DeployedFunction, bundle: Bundle, backing: Backing, workdir: string, options: { event: unknown; links?: Record<string, Record<string, unknown>>; taskRoot?: string }): Promise<Probe> {
  const keyFile = join(workdir, `${fn.key.replace(/[^\w]+/g, '_')}.enc`);
  const env = {
    PATH: process.env.PATH ?? '',
    ...lambdaEnvironment(fn, keyFile, options.links),
    // What Lambda sets, and the local stand-ins for AWS's endpoints.
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    ...(options.taskRoot && { LAMBDA_TASK_ROOT: options.taskRoot }),
    DYNAMODB_ENDPOINT: backing.dynamoEndpoint,
    LOG_LEVEL: 'silent',
    PROBE_INPUT: JSON.stringify({ file: bundle.file, exportName: handlerSource(fn.args.handler as string).exportName, event: options.event }),
  };
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probeScript], { env, cwd: workdir, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as Probe;
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
 * Bundles every deployed function and measures each one's cold start against
 * `backing`, `times` fresh processes per function; the migrator migrates
 * `migrationDatabaseUrl`.
 */
export async function measureColdStarts(backing: Backing, workdir: string, migrationDatabaseUrl: string, times = 1): Promise<ColdStart[]> {
  const functions = await deployedFunctions(backing);
  const bundles = await bundleHandlers(
    functions.map((fn) => fn.args.handler as string),
    join(workdir, 'bundles'),
  );
  const routes = new Map(Object.values<HttpRoute>(httpRoutes).map((route) => [`${route.method} ${route.path}`, route]));
  const hubOrder = ['$connect', '$default', '$disconnect'];
  const ordered = [...functions].sort((a, b) => (a.via === 'hub' && b.via === 'hub' ? hubOrder.indexOf(a.key) - hubOrder.indexOf(b.key) : 0));
  const rows: ColdStart[] = [];
  for (const fn of ordered) {
    const handler = fn.args.handler as string;
    const bundle = bundles.get(handler)!;
    if (fn.via === 'http') {
      const route = routes.get(fn.key)!;
      // The files the route table says its handler reads, beside the bundle as the deploy's copyFiles puts them.
      const taskRoot = route.copyFiles ? join(workdir, 'task-roots', fn.key.replace(/[^\w]+/g, '_')) : undefined;
      for (const { from, to } of route.copyFiles ?? []) cpSync(join(repositoryRoot, from), join(taskRoot!, to), { recursive: true });
      const measured = await probeMedian(times, () => probe(fn, bundle, backing, workdir, { event: httpEvent(route), taskRoot }));
      rows.push({ key: fn.key, handler, bundle, probe: measured, expectedStatus: expectedStatus(route) });
    } else if (fn.via === 'hub') {
      const measured = await probeMedian(times, () => probe(fn, bundle, backing, workdir, { event: hubEvent(fn.key) }));
      rows.push({ key: fn.key, handler, bundle, probe: measured, expectedStatus: 200 });
    } else {
      // As the deploy does: the function's copyFiles land beside its bundle, in the task root.
      const taskRoot = join(workdir, 'task-root');
      mkdirSync(taskRoot, { recursive: true });
      for (const { from, to } of fn.args.copyFiles as { from: string; to?: string }[]) cpSync(join(repositoryRoot, from), join(taskRoot, to ?? from), { recursive: true });
      const links = { DatabaseUrl: { value: migrationDatabaseUrl } };
      rows.push({ key: fn.key, handler, bundle, probe: await probeMedian(times, () => probe(fn, bundle, backing, workdir, { event: {}, links, taskRoot })) });
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
