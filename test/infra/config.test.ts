import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { parse as parseConnectionString } from 'pg-connection-string';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '@hatchery/core/config';
import { createTableInput, tableDefinition } from '@hatchery/core/dynamo/table';
import { migrationsDir } from '@hatchery/core/migrate';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { hubPath, wsRoutes } from '@hatchery/functions/routes/realtime';
import { Component, FakeOutput, installSstFakes, resolve, secretPaths, SecretMissingError, type FakeOptions, type Recording } from './fakes';
import { containerEnvironment, handlerSource, lambdaEnvironment, repositoryRoot } from './sst-env';

/** SPEC.md "Endpoints": method, path, and whether the endpoint requires the identity provider's token. */
const specEndpoints: ReadonlyArray<readonly [string, string, 'jwt' | 'none']> = [
  ['GET', '/accounts/me', 'jwt'],
  ['POST', '/accounts/me/wallet/nonce', 'jwt'],
  ['POST', '/accounts/me/wallet', 'jwt'],
  ['DELETE', '/accounts/me/wallet', 'jwt'],
  ['GET', '/editions', 'none'],
  ['GET', '/accounts/{address}/nfts', 'none'],
  ['GET', '/marketplace/listings', 'none'],
  ['GET', '/accounts/{address}/staking', 'none'],
  ['GET', '/accounts/{address}/forge-requests', 'none'],
  ['GET', '/accounts/{address}/referral', 'none'],
  ['GET', '/transparency/sales', 'none'],
  ['GET', '/transparency/summary', 'none'],
];

const secrets = {
  IdpProjectId: 'hatchery-prod-7f3a',
  CorsOrigins: 'https://app.example.com, https://admin.example.com',
  CorsAllowedHostSuffixes: '.example.org',
};

const keyDir = mkdtempSync(join(tmpdir(), 'hatchery-infra-keys-'));
let keyFiles = 0;
const keyFile = () => join(keyDir, `resource-${keyFiles++}.enc`);

async function deploy(options: { secrets?: Record<string, string>; env?: Record<string, string>; fakes?: FakeOptions } = {}) {
  const env = { ...Object.fromEntries(Object.entries(options.secrets ?? secrets).map(([name, value]) => [`SST_SECRET_${name}`, value])), ...options.env };
  Object.assign(process.env, env);
  applied.push(...Object.keys(env));
  const recording = installSstFakes(options.fakes);
  const { default: app } = await import('../../sst.config');
  const outputs = (await app.run()) as Record<string, unknown>;
  return { recording, outputs, app };
}

const applied: string[] = [];
afterEach(() => {
  for (const name of applied.splice(0)) delete process.env[name];
});
afterAll(() => rmSync(keyDir, { recursive: true, force: true }));

function only(recording: Recording, type: string): Component & Record<string, unknown> {
  const found = recording.components.filter((component) => component.type === type);
  expect(found, type).toHaveLength(1);
  return found[0] as Component & Record<string, unknown>;
}

const valueOf = (output: unknown) => resolve(output) as string;

describe('sst.config.ts app()', () => {
  it('keeps the data of the prod stage and protects it; other stages are removed whole', async () => {
    installSstFakes();
    const { default: app } = await import('../../sst.config');
    expect(app.app({ stage: 'prod' })).toEqual({ name: 'hatchery', home: 'aws', removal: 'retain', protect: true });
    expect(app.app({ stage: 'production' })).toMatchObject({ removal: 'retain', protect: true });
    expect(app.app({ stage: 'alice' })).toEqual({ name: 'hatchery', home: 'aws', removal: 'remove', protect: false });
  });
});

describe('sst.config.ts run()', () => {
  it('deploys every route of SPEC.md with its method, path and authorization, each its own function', async () => {
    const { recording } = await deploy();
    const http = recording.functions.filter((fn) => fn.via === 'http');
    const byKey = new Map(http.map((fn) => [fn.key, fn]));
    const table = new Map(Object.values<HttpRoute>(httpRoutes).map((route) => [`${route.method} ${route.path}`, route]));
    for (const [method, path, auth] of specEndpoints) {
      const key = `${method} ${path}`;
      const deployed = byKey.get(key);
      expect(deployed, key).toBeDefined();
      expect(table.get(key)?.auth, key).toBe(auth);
      expect(deployed!.args.handler).toBe(table.get(key)!.handler);
      // The gateway does not authorize: the handler's chain answers a missing token with problem+json 401.
      expect(deployed!.routeArgs).toEqual({ auth: false });
      expect((deployed!.args.link as Component[]).map((link) => link.logicalName)).toContain('IdpProjectId');
    }
    // Nothing else, and nothing missing: exactly the route table, one function per route.
    expect([...byKey.keys()].sort()).toEqual([...table.keys()].sort());
    expect(http).toHaveLength(table.size);
    expect(byKey.get('POST /hubs/events/negotiate')).toBeDefined();
  });

  it('serves the hub with $connect, $disconnect and $default, each able to answer through the management API', async () => {
    const { recording } = await deploy();
    const hub = only(recording, 'sst:aws:ApiGatewayWebSocket');
    const routes = recording.functions.filter((fn) => fn.via === 'hub');
    expect(routes.map((fn) => fn.key).sort()).toEqual(['$connect', '$default', '$disconnect']);
    expect(routes.map((fn) => fn.args.handler).sort()).toEqual(wsRoutes.map((route) => route.handler).sort());
    const executionArn = valueOf((hub.nodes as { api: { executionArn: unknown } }).api.executionArn);
    for (const fn of routes) {
      expect(fn.routeArgs, fn.key).toMatchObject({ routeKey: fn.key, authorizationType: 'NONE' });
      expect(loadConfig(lambdaEnvironment(fn, keyFile())).WEBSOCKET_MANAGEMENT_ENDPOINT, fn.key).toBe(valueOf(hub.managementEndpoint));
      expect(resolve(fn.args.permissions), fn.key).toEqual([{ actions: ['execute-api:ManageConnections'], resources: [`${executionArn}/*/*/@connections/*`] }]);
    }
  });

  it('names, for every function, a handler file that exists and exports `handler`', async () => {
    const { recording } = await deploy();
    const handlers = [...new Set(recording.functions.map((fn) => fn.args.handler as string))];
    expect(handlers.length).toBeGreaterThan(specEndpoints.length);
    const missing: string[] = [];
    for (const handler of handlers) {
      const { file, exportName } = handlerSource(handler);
      const path = join(repositoryRoot, file);
      if (!existsSync(path)) {
        missing.push(`${file} does not exist`);
        continue;
      }
      const { metafile } = await build({ entryPoints: [path], bundle: false, write: false, metafile: true, format: 'esm', platform: 'node', outdir: 'out', logLevel: 'silent' });
      const exports = Object.values(metafile.outputs).flatMap((output) => output.exports);
      if (!exports.includes(exportName)) missing.push(`${file} does not export ${exportName}`);
    }
    expect(missing).toEqual([]);
  });

  it('gives every function Node.js 22 on arm64, the VPC, a size and a timeout, and a configuration that loads', async () => {
    const { recording } = await deploy();
    const vpc = only(recording, 'sst:aws:Vpc');
    const table = only(recording, 'sst:aws:Dynamo');
    const database = only(recording, 'sst:sst:Linkable');
    for (const fn of recording.functions) {
      expect(fn.args, fn.key).toMatchObject({ runtime: 'nodejs22.x', architecture: 'arm64', nodejs: { format: 'esm', minify: true } });
      expect(fn.args.vpc, fn.key).toBe(vpc);
      expect(fn.args.memory, fn.key).toMatch(/^\d+ MB$/);
      expect(fn.args.timeout, fn.key).toMatch(/^\d+ (seconds|minutes)$/);
      // What the handler's config() sees in Lambda: the links SST seals into the bundle.
      const config = loadConfig(lambdaEnvironment(fn, keyFile()));
      expect(config.DATABASE_URL, fn.key).toBe(valueOf((database.args.properties as { value: unknown }).value));
      expect(config.DYNAMODB_TABLE, fn.key).toBe(valueOf(table.name));
      expect(config.DYNAMODB_ENDPOINT, fn.key).toBeUndefined();
      expect(config.IDP_PROJECT_ID, fn.key).toBe(secrets.IdpProjectId);
      expect(config.CORS_ORIGINS, fn.key).toEqual(['https://app.example.com', 'https://admin.example.com']);
      expect(config.CORS_ALLOWED_HOST_SUFFIXES, fn.key).toEqual(['.example.org']);
    }
  });

  it('creates the DynamoDB table from the definition the local stack uses', async () => {
    const { recording } = await deploy();
    const table = only(recording, 'sst:aws:Dynamo');
    const args = table.args as { fields: Record<string, string>; primaryIndex: { hashKey: string; rangeKey: string }; ttl: string };
    const attributeType = { string: 'S', number: 'N', binary: 'B' } as Record<string, 'S' | 'N' | 'B'>;
    const name = valueOf(table.name);
    // SST's Dynamo is on-demand (PAY_PER_REQUEST), like the local table.
    const fromInfra = {
      TableName: name,
      AttributeDefinitions: Object.entries(args.fields).map(([field, type]) => ({ AttributeName: field, AttributeType: attributeType[type] })),
      KeySchema: [
        { AttributeName: args.primaryIndex.hashKey, KeyType: 'HASH' },
        { AttributeName: args.primaryIndex.rangeKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    };
    expect(fromInfra).toEqual(createTableInput(name));
    expect(args.ttl).toBe(tableDefinition.ttlAttribute);
  });

  it('creates PostgreSQL behind RDS Proxy in the VPC and links its URL, TLS verified', async () => {
    const { recording } = await deploy();
    const postgres = only(recording, 'sst:aws:Postgres');
    expect(postgres.args).toMatchObject({ proxy: true, vpc: only(recording, 'sst:aws:Vpc') });
    const linkable = only(recording, 'sst:sst:Linkable');
    expect(linkable.logicalName).toBe('DatabaseUrl');
    const url = (linkable.args.properties as { value: FakeOutput<string> }).value;
    expect(url.secret).toBe(true);
    const parsed = parseConnectionString(url.value);
    expect(parsed).toMatchObject({
      host: valueOf(postgres.host),
      port: String(valueOf(postgres.port)),
      user: 'postgres',
      password: valueOf(postgres.password),
      database: 'hatchery',
    });
    expect(parsed.ssl).toEqual({});
    expect(url.value).toContain('sslmode=verify-full');
  });

  it('uses the existing database given by the DatabaseUrl secret instead, creating none', async () => {
    const existing = 'postgres://reader:s3cr%40t@indexer.internal:5432/ponder?sslmode=no-verify';
    const { recording } = await deploy({ secrets: { ...secrets, DatabaseUrl: existing } });
    expect(recording.components.filter((component) => component.type === 'sst:aws:Postgres')).toEqual([]);
    expect(recording.components.filter((component) => component.type === 'sst:sst:Linkable')).toEqual([]);
    const databaseSecret = recording.components.find((component) => component.type === 'sst:sst:Secret' && component.logicalName === 'DatabaseUrl');
    expect(databaseSecret?.args).toEqual({ placeholder: undefined });
    for (const fn of recording.functions) expect(loadConfig(lambdaEnvironment(fn, keyFile())).DATABASE_URL, fn.key).toBe(existing);
    const service = only(recording, 'sst:aws:Service');
    expect(loadConfig(containerEnvironment(service.args)).DATABASE_URL).toBe(existing);
  });

  it('runs the listener on Fargate with the database, the table, the hub’s management API and its permission', async () => {
    const { recording } = await deploy();
    const service = only(recording, 'sst:aws:Service');
    const cluster = only(recording, 'sst:aws:Cluster');
    const hub = only(recording, 'sst:aws:ApiGatewayWebSocket');
    const table = only(recording, 'sst:aws:Dynamo');
    const database = only(recording, 'sst:sst:Linkable');
    expect(cluster.args.vpc).toBe(only(recording, 'sst:aws:Vpc'));
    expect(service.args).toMatchObject({ cluster, scaling: { min: 1, max: 1 }, image: { context: '.', dockerfile: 'packages/listener/Dockerfile' } });
    // SST grants a linked table's access with the link.
    expect(service.args.link).toContain(table);
    expect(resolve(service.args.permissions)).toEqual([
      { actions: ['execute-api:ManageConnections'], resources: [`${valueOf((hub.nodes as { api: { executionArn: unknown } }).api.executionArn)}/*/*/@connections/*`] },
    ]);
    const env = containerEnvironment(service.args);
    const config = loadConfig(env);
    expect(config.DATABASE_URL).toBe(valueOf((database.args.properties as { value: unknown }).value));
    expect(config.DYNAMODB_TABLE).toBe(valueOf(table.name));
    expect(config.WEBSOCKET_MANAGEMENT_ENDPOINT).toBe(valueOf(hub.managementEndpoint));
    expect(config.AWS_REGION).toBe('eu-west-1');
  });

  it('builds the listener image from a Dockerfile that exists', async () => {
    const { recording } = await deploy();
    const image = only(recording, 'sst:aws:Service').args.image as { context: string; dockerfile: string };
    expect(existsSync(join(repositoryRoot, image.context, image.dockerfile)), image.dockerfile).toBe(true);
  });

  it('adds a warm standby listener task when asked', async () => {
    const { recording } = await deploy({ env: { HATCHERY_LISTENER_STANDBY: 'true' } });
    expect(only(recording, 'sst:aws:Service').args.scaling).toEqual({ min: 2, max: 2 });
  });

  it('puts both APIs behind one router: the hub path to the WebSocket API, the rest to the HTTP API', async () => {
    const { recording } = await deploy();
    const api = only(recording, 'sst:aws:ApiGatewayV2');
    const hub = only(recording, 'sst:aws:ApiGatewayWebSocket');
    const apiUrl = valueOf(api.url);
    const hubHost = new URL(valueOf(hub.url)).host;
    // CloudFront's routing as SST's Router function does it: the longest matching path prefix wins.
    const routeOf = (uri: string) => {
      const matches = recording.routerRoutes.filter(({ pattern }) => uri.startsWith(pattern) && (uri === pattern || pattern.endsWith('/') || uri[pattern.length] === '/'));
      const best = matches.sort((a, b) => b.pattern.length - a.pattern.length)[0]!;
      const rewrite = (best.args as { rewrite?: { regex: string; to: string } } | undefined)?.rewrite;
      return { url: best.url, uri: rewrite ? uri.replace(new RegExp(rewrite.regex), rewrite.to) : uri };
    };
    expect(routeOf('/editions')).toEqual({ url: apiUrl, uri: '/editions' });
    expect(routeOf('/accounts/me/wallet/nonce')).toEqual({ url: apiUrl, uri: '/accounts/me/wallet/nonce' });
    expect(routeOf('/hubs/events/negotiate')).toEqual({ url: apiUrl, uri: '/hubs/events/negotiate' });
    expect(routeOf(hubPath)).toEqual({ url: `https://${hubHost}`, uri: '/$default' });
    expect(routeOf('/hubs/eventsx')).toEqual({ url: apiUrl, uri: '/hubs/eventsx' });
  });

  it('limits each client IP at the router and each API stage as a whole', async () => {
    const { recording } = await deploy();
    const router = only(recording, 'sst:aws:Router');
    // IP_RATE_LIMIT_PER_SECOND's default (200), over WAF's five-minute window.
    expect((router.args.waf as { rateLimitPerIp: number }).rateLimitPerIp).toBe(200 * 300);
    for (const type of ['sst:aws:ApiGatewayV2', 'sst:aws:ApiGatewayWebSocket']) {
      expect(only(recording, type).stageArgs, type).toMatchObject({ defaultRouteSettings: { throttlingRateLimit: 1000, throttlingBurstLimit: 2000 } });
    }
    const tuned = await deploy({ env: { IP_RATE_LIMIT_PER_SECOND: '20', API_RATE_LIMIT_PER_SECOND: '300' } });
    expect((only(tuned.recording, 'sst:aws:Router').args.waf as { rateLimitPerIp: number }).rateLimitPerIp).toBe(6000);
    expect(only(tuned.recording, 'sst:aws:ApiGatewayV2').stageArgs).toMatchObject({ defaultRouteSettings: { throttlingRateLimit: 300, throttlingBurstLimit: 600 } });
    const off = await deploy({ env: { IP_RATE_LIMIT_PER_SECOND: '0' } });
    expect(only(off.recording, 'sst:aws:Router').args.waf).toBeUndefined();
  });

  it('never lets CloudFront serve one caller’s cached response to another caller or origin', async () => {
    const { recording } = await deploy();
    const policy = only(recording, 'sst:aws:Router').cachePolicyArgs as { parametersInCacheKeyAndForwardedToOrigin: { headersConfig: { headerBehavior: string; headers: { items: string[] } } } };
    const { headersConfig } = policy.parametersInCacheKeyAndForwardedToOrigin;
    expect(headersConfig.headerBehavior).toBe('whitelist');
    expect(headersConfig.headers.items).toEqual(expect.arrayContaining(['authorization', 'origin', 'x-forwarded-host']));
  });

  it('runs the migrations on every deploy with a function that carries the SQL files', async () => {
    const { recording } = await deploy();
    const migrator = recording.components.find((component) => component.type === 'sst:aws:Function' && component.logicalName === 'Migrator') as Component & { name: unknown };
    expect(migrator.args).toMatchObject({ handler: 'infra/handlers/migrate.handler', copyFiles: [{ to: 'migrations' }] });
    const copied = (migrator.args.copyFiles as { from: string }[])[0]!.from;
    expect(resolvePath(repositoryRoot, copied)).toBe(migrationsDir);
    expect(readdirSync(migrationsDir).some((file) => file.endsWith('.sql'))).toBe(true);
    const invocation = only(recording, 'aws:lambda:Invocation');
    expect(valueOf(invocation.args.functionName)).toBe(valueOf(migrator.name));
    const first = (invocation.args.triggers as Record<string, string>).deployedAt;
    await new Promise((done) => setTimeout(done, 5));
    const again = await deploy();
    expect((only(again.recording, 'aws:lambda:Invocation').args.triggers as Record<string, string>).deployedAt).not.toBe(first);
  });

  it('keeps every secret out of plain text: secrets reach code only through links', async () => {
    const { recording } = await deploy();
    const postgres = only(recording, 'sst:aws:Postgres');
    const plainSecrets = [...Object.values(secrets), valueOf(postgres.password)];
    const holders = new Set(['sst:sst:Secret', 'sst:sst:Linkable']);
    const leaks: string[] = [];
    const check = (where: string, args: Record<string, unknown>) => {
      const { link: _link, ...rest } = args;
      for (const path of secretPaths(rest)) leaks.push(`${where}${path}`);
      const text = JSON.stringify(resolve(rest), (_key, value) => (value instanceof Component ? `<${value.logicalName}>` : value));
      for (const secret of plainSecrets) if (text.includes(secret)) leaks.push(`${where} contains a secret value`);
    };
    for (const component of recording.components) if (!holders.has(component.type)) check(component.logicalName, component.args);
    for (const fn of recording.functions) check(fn.key, { ...fn.args, routeArgs: fn.routeArgs });
    expect(leaks).toEqual([]);
    // Secrets that must be set per stage have no placeholder in the config.
    for (const name of ['IdpProjectId']) {
      const secret = recording.components.find((component) => component.type === 'sst:sst:Secret' && component.logicalName === name);
      expect(secret?.args, name).toEqual({ placeholder: undefined });
    }
    // And no credentials are written into the config's source.
    const sources = ['sst.config.ts', ...readdirSync(join(repositoryRoot, 'infra')).filter((file) => file.endsWith('.ts')).map((file) => `infra/${file}`)];
    for (const file of sources) {
      const text = readFileSync(join(repositoryRoot, file), 'utf8');
      expect(text, file).not.toMatch(/\w+:\/\/[^\s'"`$/]+:[^\s'"`$@/]+@/);
      expect(text, file).not.toMatch(/new sst\.Secret\([^)]*DATABASE_URL[^)]*,/);
    }
  });

  it('fails the deploy when a secret without a default is not set, or a setting is invalid', async () => {
    const { IdpProjectId: _unset, ...withoutProject } = secrets;
    await expect(deploy({ secrets: withoutProject })).rejects.toBeInstanceOf(SecretMissingError);
    await expect(deploy({ env: { HATCHERY_NAT: 'nat-gateway' } })).rejects.toThrow(/HATCHERY_NAT/);
  });

  it('bundles as SST bundles a config, and the bundle deploys the same', async () => {
    const { recording: direct } = await deploy();
    // SST's pkg/js/js.go: one ESM bundle in .sst/platform, only Pulumi, the AWS SDK and a few tools left external.
    const outfile = join(repositoryRoot, '.sst', 'platform', `sst.config.${process.pid}.${Date.now()}.mjs`);
    mkdirSync(join(repositoryRoot, '.sst', 'platform'), { recursive: true });
    await build({
      entryPoints: [join(repositoryRoot, 'sst.config.ts')],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'node',
      mainFields: ['module', 'main'],
      external: ['@pulumi/*', 'undici', '@pulumiverse/*', '@sst-provider/*', '@aws-sdk/*', 'esbuild', 'archiver', 'glob', 'vite'],
      banner: { js: `import { createRequire as topLevelCreateRequire } from 'module';\nconst require = topLevelCreateRequire(import.meta.url);` },
      logLevel: 'silent',
    });
    try {
      Object.assign(process.env, Object.fromEntries(Object.entries(secrets).map(([name, value]) => [`SST_SECRET_${name}`, value])));
      applied.push(...Object.keys(secrets).map((name) => `SST_SECRET_${name}`));
      const bundled = installSstFakes();
      const { default: app } = (await import(pathToFileURL(outfile).href)) as { default: { run(): Promise<Record<string, unknown>> } };
      const outputs = await app.run();
      const shape = (recording: Recording) => recording.components.map((component) => `${component.type} ${component.logicalName}`).sort();
      expect(shape(bundled)).toEqual(shape(direct));
      expect(bundled.functions.map((fn) => `${fn.key} ${String(fn.args.handler)}`).sort()).toEqual(direct.functions.map((fn) => `${fn.key} ${String(fn.args.handler)}`).sort());
      expect(Object.keys(outputs).sort()).toEqual(['hubUrl', 'url']);
    } finally {
      rmSync(outfile, { force: true });
    }
  });

  it('outputs the base URL and the hub URL', async () => {
    const { recording, outputs } = await deploy();
    const routerUrl = valueOf(only(recording, 'sst:aws:Router').url);
    expect(valueOf(outputs.url)).toBe(routerUrl);
    expect(valueOf(outputs.hubUrl)).toBe(`${routerUrl}${hubPath}`);
  });
});
