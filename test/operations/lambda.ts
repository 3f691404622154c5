import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { build } from 'esbuild';
import type { HttpRoute } from '@hatchery/functions/routes';

const run = promisify(execFile);

export const repositoryRoot = new URL('../../', import.meta.url).pathname;

export interface Bundle {
  handler: string;
  file: string;
  exportName: string;
  bytes: number;
  gzipBytes: number;
}

/**
 * One self-contained ESM file per handler, built as SST's Node.js runtime
 * builds a function (the options test/infra's bundles use): minified, names
 * kept, `module` before `main`, pg-native left out, `require` provided.
 * `sourceRoot` bundles another checkout's packages with this one's node_modules.
 */
export async function bundleHandlers(handlers: readonly string[], outdir: string, sourceRoot = repositoryRoot): Promise<Bundle[]> {
  const entries = [...new Set(handlers)].map((handler) => {
    const dot = handler.lastIndexOf('.');
    return { handler, in: join(sourceRoot, `${handler.slice(0, dot)}.ts`), out: handler.slice(0, dot), exportName: handler.slice(dot + 1) };
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
    logLevel: 'silent',
    alias: Object.fromEntries(['core', 'functions', 'listener'].map((name) => [`@hatchery/${name}`, join(sourceRoot, 'packages', name, 'src')])),
    nodePaths: [join(repositoryRoot, 'node_modules')],
    banner: { js: `import { createRequire as topLevelCreateRequire } from 'module';\nconst require = topLevelCreateRequire(import.meta.url);` },
  });
  return entries.map(({ handler, out, exportName }) => {
    const file = join(outdir, `${out}.mjs`);
    return { handler, file, exportName, bytes: statSync(file).size, gzipBytes: gzipSync(readFileSync(file)).length };
  });
}

export interface Probe {
  importMs: number;
  firstCallMs: number;
  /** CPU (user + system) per warm call, in microseconds, over `warmCalls` calls. */
  warmCpuUs?: number;
  statusCode?: number;
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
process.stdout.write('\\nPROBE ' + JSON.stringify(report) + '\\n');
// Lets the X-Ray SDK's UDP sends of the last subsegments leave before the process does.
await new Promise((resolve) => setTimeout(resolve, 100));
process.exit(0);
`;

/** Imports and calls one bundle in a fresh Node.js process with only `env` (and PATH); returns the figures and what it printed. */
export async function probe(
  bundle: Bundle,
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

/** An HTTP API (payload 2.0) event for `route`, with a bearer token and a JSON body when given. */
export function httpEvent(route: HttpRoute, options: { token?: string; body?: unknown } = {}): APIGatewayProxyEventV2 {
  const now = Date.now();
  const routeKey = `${route.method} ${route.path}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: route.path,
    rawQueryString: '',
    headers: {
      host: 'api.example.test',
      ...(options.token !== undefined && { authorization: `Bearer ${options.token}` }),
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'logs',
      domainName: 'api.example.test',
      domainPrefix: 'api',
      http: { method: route.method, path: route.path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'logging-test' },
      requestId: randomUUID(),
      routeKey,
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
