import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { build, type BuildOptions } from 'esbuild';
import * as z from '@hatchery/platform/schema';
import type { HttpRoute } from '@hatchery/functions/routes';
import { demoAddress } from '@hatchery/local/demo-data';

const run = promisify(execFile);

export const repositoryRoot = new URL('../../', import.meta.url).pathname;

/** A function's code as Lambda is given it: one file, its size and its size gzipped (about its zip's). */
export interface Bundle {
  file: string;
  bytes: number;
  gzipBytes: number;
}

export const bundleOf = (file: string): Bundle => ({ file, bytes: statSync(file).size, gzipBytes: gzipSync(readFileSync(file)).length });

/** A bundle built here from a handler (`path/to/file.export`): what it exports the handler as. */
export interface HandlerBundle extends Bundle {
  handler: string;
  exportName: string;
}

/** How SST's Node.js runtime resolves a function's imports (test/deploy/sst/build-handler.ts): one ESM file, ESM builds first. */
export const sstResolution = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  mainFields: ['module', 'main'],
  external: ['sharp', 'pg-native'],
} as const satisfies BuildOptions;

/** Every workspace package of a checkout, by its name, at its sources: a baseline bundle takes none of this checkout's. */
function workspaceAliases(sourceRoot: string): Record<string, string> {
  const packages = join(sourceRoot, 'packages');
  return Object.fromEntries(
    readdirSync(packages)
      .filter((dir) => existsSync(join(packages, dir, 'package.json')))
      .map((dir) => [(JSON.parse(readFileSync(join(packages, dir, 'package.json'), 'utf8')) as { name: string }).name, join(packages, dir, 'src')]),
  );
}

/**
 * One self-contained ESM file per handler, built as SST's Node.js runtime
 * builds a function (the options test/deploy's bundles use): minified, names
 * kept, `module` before `main`, pg-native left out, `require` provided.
 * `sourceRoot` bundles another checkout's packages with this one's node_modules.
 */
export async function bundleHandlers(handlers: readonly string[], outdir: string, sourceRoot = repositoryRoot): Promise<HandlerBundle[]> {
  const entries = [...new Set(handlers)].map((handler) => {
    const dot = handler.lastIndexOf('.');
    return { handler, in: join(sourceRoot, `${handler.slice(0, dot)}.ts`), out: handler.slice(0, dot), exportName: handler.slice(dot + 1) };
  });
  await build({
    entryPoints: entries.map(({ in: input, out }) => ({ in: input, out })),
    outdir,
    outExtension: { '.js': '.mjs' },
    ...sstResolution,
    target: 'esnext',
    minify: true,
    keepNames: true,
    logLevel: 'silent',
    alias: workspaceAliases(sourceRoot),
    nodePaths: [join(repositoryRoot, 'node_modules')],
    banner: { js: `import { createRequire as topLevelCreateRequire } from 'module';\nconst require = topLevelCreateRequire(import.meta.url);` },
  });
  return entries.map(({ handler, out, exportName }) => ({ handler, exportName, ...bundleOf(join(outdir, `${out}.mjs`)) }));
}

export interface Probe {
  importMs: number;
  firstCallMs: number;
  /** CPU (user + system) per warm call, in microseconds, over `warmCalls` calls. */
  warmCpuUs?: number;
  statusCode?: number;
  /** What the first call answered. */
  result?: unknown;
  error?: string;
}

/** Runs in a fresh process, like a new Lambda execution environment: the import (init), a first call, then warm calls. */
const probeScript = `
const { pathToFileURL } = await import('node:url');
const { file, exportName, event, warmCalls } = JSON.parse(process.env.PROBE_INPUT);
const context = (id) => ({ awsRequestId: 'probe-' + id, functionName: 'probe', functionVersion: '$LATEST', memoryLimitInMB: '1024', callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => 10000 });
const report = {};
try {
  let started = performance.now();
  const module = await import(pathToFileURL(file).href);
  report.importMs = performance.now() - started;
  started = performance.now();
  const result = await module[exportName](event, context(0));
  report.firstCallMs = performance.now() - started;
  report.statusCode = result?.statusCode;
  report.result = result;
  if (warmCalls > 0) {
    for (let i = 0; i < 20; i++) await module[exportName](event, context('w' + i));
    const cpu = process.cpuUsage();
    for (let i = 0; i < warmCalls; i++) await module[exportName](event, context(i + 1));
    const used = process.cpuUsage(cpu);
    report.warmCpuUs = (used.user + used.system) / warmCalls;
  }
} catch (error) {
  report.error = String(error?.stack ?? error);
}
// A pipe takes a large report (a file's body) in several writes; the X-Ray SDK's UDP sends of the last subsegments need a moment to leave.
const linger = process.env.AWS_XRAY_DAEMON_ADDRESS ? 100 : 0;
process.stdout.write('\\nPROBE ' + JSON.stringify(report) + '\\n', () => setTimeout(() => process.exit(0), linger));
`;

/** Imports and calls one bundle in a fresh Node.js process with only `env` (and PATH); returns the figures and what it printed. */
export async function probe(
  bundle: Pick<HandlerBundle, 'file' | 'exportName'>,
  event: unknown,
  env: Record<string, string>,
  options: { warmCalls?: number; cwd?: string } = {},
): Promise<{ probe: Probe; stdout: string }> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probeScript], {
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      PROBE_INPUT: JSON.stringify({ file: bundle.file, exportName: bundle.exportName, event, warmCalls: options.warmCalls ?? 0 }),
    },
    cwd: options.cwd,
    timeout: 120_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  // The handler's own lines may still land after the report (pino writes to the descriptor itself), so the report is read as one line.
  const marker = stdout.lastIndexOf('\nPROBE ');
  const end = stdout.indexOf('\n', marker + 1);
  return { probe: JSON.parse(stdout.slice(marker + '\nPROBE '.length, end)) as Probe, stdout: stdout.slice(0, marker) + stdout.slice(end) };
}

/** What Lambda sets for a function with active tracing, the X-Ray daemon's address being `daemonPort` here. */
export function tracingEnvironment(daemonPort: number, functionName = 'probe'): Record<string, string> {
  return {
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    LAMBDA_TASK_ROOT: repositoryRoot,
    _HANDLER: 'index.handler',
    _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemonPort}`,
    AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
  };
}

/** A stand-in for the X-Ray daemon: collects the segment documents sent to it over UDP. */
export async function xrayDaemon(): Promise<{ port: number; documents: Record<string, unknown>[]; close(): Promise<void> }> {
  const socket = createSocket('udp4');
  const documents: Record<string, unknown>[] = [];
  socket.on('message', (message) => {
    // Each datagram is a header line, then one segment document.
    const body = message.toString('utf8').split('\n').slice(1).join('\n');
    try {
      documents.push(JSON.parse(body) as Record<string, unknown>);
    } catch {
      // Not a segment document.
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, documents, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}

/** Each path parameter's documented example (the route's zod schema), else demo wallet 1; a greedy path matches nothing. */
function pathParameters(route: HttpRoute): Record<string, string> | undefined {
  const names = [...route.path.matchAll(/\{(\w+)(\+?)\}/g)];
  if (!names.length) return undefined;
  const schema = route.request?.params && (z.toJSONSchema(route.request.params, { io: 'input' }) as { properties?: Record<string, { examples?: string[] }> });
  return Object.fromEntries(names.map(([, name, greedy]) => [name!, greedy ? 'no/such/path' : (schema?.properties?.[name!]?.examples?.[0] ?? demoAddress(1))]));
}

/**
 * An HTTP API (payload 2.0) event for `route` that its function answers
 * without a token (a public POST is a negotiation); `parameters` replace the
 * path parameters' examples, and a token or a JSON body are sent when given.
 */
export function httpEvent(
  route: HttpRoute,
  options: { headers?: Record<string, string>; parameters?: Record<string, string>; token?: string; body?: unknown } = {},
): APIGatewayProxyEventV2 {
  const parameters = options.parameters ?? pathParameters(route);
  const method = route.method === 'ANY' ? 'GET' : route.method;
  const path = route.path.replace(/\{(\w+)\+?\}/g, (_whole, name: string) => parameters![name]!);
  const rawQueryString = method === 'POST' && route.auth === 'none' ? 'negotiateVersion=1' : '';
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath: path,
    rawQueryString,
    headers: {
      host: 'api.example.test',
      'user-agent': 'probe',
      accept: 'application/json',
      ...(options.token !== undefined && { authorization: `Bearer ${options.token}` }),
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
      ...options.headers,
    },
    queryStringParameters: rawQueryString ? Object.fromEntries(new URLSearchParams(rawQueryString)) : undefined,
    pathParameters: parameters,
    requestContext: {
      accountId: '123456789012',
      apiId: 'probe',
      domainName: 'api.example.test',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'probe' },
      requestId: randomUUID(),
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    isBase64Encoded: false,
  };
}

/** What a function's configuration reads when it runs against the local stack in a process of its own (the AWS endpoints are the stack's). */
export function stackBacking(stack: { databaseUrl: string; dynamoEndpoint: string; url: string; idp: { projectId: string } }): Record<string, string> {
  return {
    DATABASE_URL: stack.databaseUrl,
    DYNAMODB_ENDPOINT: stack.dynamoEndpoint,
    IDP_PROJECT_ID: stack.idp.projectId,
    IDP_JWKS_URL: `${stack.url}/.well-known/jwks.json`,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
}
