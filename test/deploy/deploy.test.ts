/**
 * `sst deploy` of sst.config.ts, run against the real SST v4 components under
 * Pulumi's unit-test mocks (test/deploy/sst/), once per variant a platform team
 * can choose. Assertions are on the AWS resources the components produce,
 * never on SST's arguments.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '@hatchery/platform/config';
import { readSettings } from '@hatchery/platform/config/environment';
import { attemptBoundMs, databaseLimits } from '@hatchery/core/db';
import { createTableInput, tableDefinition } from '@hatchery/platform/aws/table';
import { createMetrics, listenerDocuments, metricCatalog, setEmfSink, type MetricName } from '@hatchery/platform/telemetry/metrics';
import { originVerifyHeader } from '@hatchery/functions/origin-verify';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { fanOutHandler, hubPath, wsRoutes } from '@hatchery/functions/routes/realtime';
import type { DeployResult } from './sst/deploy';
import { deployedFunctions, inputs, ofType, only, plainStrings, reveal, routesOf, state, type DeployedFunction } from './sst/deployed';
import { openSealedLinks } from './sst/build-handler';
import { ensurePlatform } from './sst/platform';
import { buildRecord, dataLosingChanges, readRecord, writeRecord } from './stateful';
import { docBlock } from '../support/docs';
import { statefulResources } from '../../infra/stateful';
import { runDeploys } from './sst/run';
import { listenerMetrics } from '@hatchery/listener/metrics';
import { lambdaRuntime, nodeMajor } from '../../infra/runtime';
import { functionTimeoutSeconds } from '@hatchery/functions/function-timeouts';

const secrets = {
  SST_SECRET_IdpProjectId: 'hatchery-prod-7f3a',
  SST_SECRET_CorsOrigins: 'https://app.example.com, https://admin.example.com',
  SST_SECRET_CorsAllowedHostSuffixes: '.example.org',
};
const existingDatabaseUrl = 'postgres://reader:s3cr%40t@indexer.internal:5432/ponder?sslmode=no-verify';

const variants = {
  dev: { stage: 'dev', env: secrets },
  prod: { stage: 'prod', env: secrets },
  existingDatabase: { stage: 'dev', env: { ...secrets, SST_SECRET_DatabaseUrl: existingDatabaseUrl } },
  /** Every other choice at once: NAT instances, the standby listener, lower limits. */
  tuned: {
    stage: 'dev',
    env: {
      ...secrets,
      HATCHERY_NAT: 'ec2',
      HATCHERY_LISTENER_STANDBY: 'true',
      IP_RATE_LIMIT_PER_SECOND: '20',
      API_RATE_LIMIT_PER_SECOND: '300',
      HATCHERY_ALARM_EMAIL: 'oncall@example.com',
      HATCHERY_ALARM_5XX_RATE: '0.01',
      HATCHERY_ALARM_LISTENER_LAG_MS: '5000',
      HATCHERY_ALARM_INDEXER_LAG_SECONDS: '120',
      INDEXER_SCHEMA: 'game_views',
      FANOUT_POSTS_PER_SECOND: '2000',
      FANOUT_MIN_INTERVAL_MS: '60000',
    },
  },
  wafOff: { stage: 'dev', env: { ...secrets, IP_RATE_LIMIT_PER_SECOND: '0' } },
  /** A config that loses data on purpose (test/deploy/fixtures/data-losing.config.ts), deployed to the other protected stage. */
  dataLosing: { stage: 'production', env: secrets, config: 'test/deploy/fixtures/data-losing.config.ts' },
  missingSecret: { stage: 'dev', env: { SST_SECRET_CorsOrigins: '' } },
} as const;

type Variant = keyof typeof variants;
/** The variants a platform team can deploy: the upgrade check's record covers each of them. */
const recordedVariants = ['dev', 'prod', 'existingDatabase', 'tuned', 'wafOff'] as const satisfies Variant[];
const deploys = {} as Record<Variant, DeployResult>;
let started = 0;

beforeAll(async () => {
  started = performance.now();
  await ensurePlatform();
  const names = Object.keys(variants) as Variant[];
  const results = await runDeploys(names.map((name) => variants[name]));
  names.forEach((name, index) => (deploys[name] = results[index]!));
  console.log(
    `Real SST components under Pulumi mocks: ${names.map((name) => `${name} ${deploys[name].error ? 'failed' : `${deploys[name].resources.length} resources`}`).join(', ')}; ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}, 600_000);

afterAll(() => {
  for (const result of Object.values(deploys)) if (result?.workDir) rmSync(result.workDir, { recursive: true, force: true });
});

/** A deploy that must have succeeded. */
function deployed(name: Variant): DeployResult {
  const result = deploys[name];
  expect(result.error, `${name}: ${result.error}`).toBeUndefined();
  return result;
}

const routeTable = Object.values<HttpRoute>(httpRoutes);

/** The URL the created database is reached at: RDS Proxy's endpoint, its generated password, TLS verified. */
function createdDatabaseUrl(result: DeployResult): string {
  const password = String(state(only(result, 'random:index/randomPassword:RandomPassword', 'DatabasePassword')).result);
  const proxy = String(state(only(result, 'aws:rds/proxy:Proxy')).endpoint);
  return `postgres://postgres:${encodeURIComponent(password)}@${proxy}:5432/hatchery?sslmode=verify-full`;
}
const privateSubnetIds = (result: DeployResult) =>
  ofType(result, 'aws:ec2/subnet:Subnet')
    .filter((subnet) => subnet.name.includes('Private'))
    .map((subnet) => subnet.id!);
const httpApi = (result: DeployResult) => only(result, 'aws:apigatewayv2/api:Api', 'ApiApi');
const hubApi = (result: DeployResult) => only(result, 'aws:apigatewayv2/api:Api', 'HubApi');

/** What the handler's settings read in Lambda: its variables plus the links sealed into its code's resource.enc. */
function lambdaConfig(fn: DeployedFunction) {
  const dir = mkdtempSync(join(tmpdir(), 'hatchery-resource-'));
  try {
    execFileSync('unzip', ['-q', fn.build.zip, 'resource.enc', '-d', dir]);
    const sealed = readFileSync(`${dir}/${fn.environment.SST_KEY_FILE}`);
    return readSettings(configSchema, fn.environment, openSealedLinks(sealed, fn.environment.SST_KEY!));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether a policy statement grants `action` on `resource` (IAM's `*` wildcards). */
function allows(statements: DeployedFunction['statements'], action: string, resource: string): boolean {
  const matches = (pattern: string, value: string) =>
    new RegExp(
      `^${pattern
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    ).test(value);
  return statements.some(
    (statement) =>
      statement.Effect === 'Allow' &&
      [statement.Action].flat().some((a) => matches(a, action)) &&
      [statement.Resource].flat().some((r) => matches(r, resource)),
  );
}

describe('the HTTP API', () => {
  it('serves every route of the route table, each its own function with the route’s handler, and nothing else', () => {
    const result = deployed('dev');
    const routes = routesOf(result, httpApi(result));
    expect([...routes.keys()].sort()).toEqual(routeTable.map((route) => `${route.method} ${route.path}`).sort());
    for (const route of routeTable) {
      const key = `${route.method} ${route.path}`;
      const deployedRoute = routes.get(key)!;
      // The gateway authorizes nothing: the handler's chain answers a missing token with problem+json 401.
      expect(deployedRoute.route.authorizationType, key).toBe('NONE');
      expect(deployedRoute.integration, key).toMatchObject({ integrationType: 'AWS_PROXY', payloadFormatVersion: '2.0' });
      expect(deployedRoute.fn.build.source, key).toBe(route.handler);
    }
    expect(new Set([...routes.values()].map((each) => each.fn.id)).size).toBe(routeTable.length);
  });

  it('has no CORS configuration, so API Gateway leaves preflights and CORS headers to the handlers', () => {
    const api = inputs(httpApi(deployed('dev')));
    expect(api.protocolType).toBe('HTTP');
    expect(api).not.toHaveProperty('corsConfiguration');
  });

  it('lets every function be invoked by its API only', () => {
    const result = deployed('dev');
    const permissions = ofType(result, 'aws:lambda/permission:Permission').map((permission) => inputs(permission));
    const executionArn = String(state(httpApi(result)).executionArn);
    for (const { fn } of routesOf(result, httpApi(result)).values()) {
      const granted = permissions.filter((permission) => permission.function === fn.arn);
      expect(granted, fn.id).toHaveLength(1);
      expect(granted[0], fn.id).toMatchObject({ action: 'lambda:InvokeFunction', principal: 'apigateway.amazonaws.com' });
      expect(String(granted[0]!.sourceArn), fn.id).toContain(executionArn);
    }
  });
});

describe('the realtime hub', () => {
  it('routes $connect, $disconnect and $default to their handlers, each able to post through the management API', () => {
    const result = deployed('dev');
    const routes = routesOf(result, hubApi(result));
    expect(inputs(hubApi(result)).protocolType).toBe('WEBSOCKET');
    expect([...routes.keys()].sort()).toEqual(wsRoutes.map((route) => route.routeKey).sort());
    const executionArn = String(state(hubApi(result)).executionArn);
    const stage = only(result, 'aws:apigatewayv2/stage:Stage', 'HubStage');
    const managementEndpoint = `https://${new URL(String(state(hubApi(result)).apiEndpoint)).host}/${String(inputs(stage).name)}`;
    for (const route of wsRoutes) {
      const { fn } = routes.get(route.routeKey)!;
      expect(fn.build.source, route.routeKey).toBe(route.handler);
      expect(allows(fn.statements, 'execute-api:ManageConnections', `${executionArn}/$default/POST/@connections/abc=`), route.routeKey).toBe(true);
      expect(lambdaConfig(fn).WEBSOCKET_MANAGEMENT_ENDPOINT, route.routeKey).toBe(managementEndpoint);
    }
  });

  it('gives $default a route response, so what its function returns (a ping’s answer, a completion) goes back to the caller', () => {
    const result = deployed('dev');
    const hubRoutes = ofType(result, 'aws:apigatewayv2/route:Route').filter((route) => inputs(route).apiId === hubApi(result).id);
    const responses = ofType(result, 'aws:apigatewayv2/routeResponse:RouteResponse').map((response) =>
      inputs<{ apiId: string; routeId: string; routeResponseKey: string }>(response),
    );
    for (const route of hubRoutes) {
      const { routeKey, routeResponseSelectionExpression } = inputs<{ routeKey: string; routeResponseSelectionExpression?: string }>(route);
      const answersInPlace = wsRoutes.some((each) => each.routeKey === routeKey && 'answersInPlace' in each && each.answersInPlace);
      expect(routeResponseSelectionExpression, routeKey).toBe(answersInPlace ? '$default' : undefined);
      expect(
        responses.filter((response) => response.routeId === route.id),
        routeKey,
      ).toEqual(answersInPlace ? [{ apiId: hubApi(result).id, routeId: route.id, routeResponseKey: '$default' }] : []);
    }
    expect(responses).toHaveLength(1);
  });
});

describe('every function', () => {
  it('runs the project’s Node (infra/runtime.ts) on arm64 with its size, its minified ESM bundle, inside AWS’s limits', () => {
    const result = deployed('dev');
    const functions = deployedFunctions(result);
    expect(functions).toHaveLength(routeTable.length + wsRoutes.length + 2);
    const hub = new Set([...routesOf(result, hubApi(result)).values()].map((each) => each.fn.id));
    const sizes: Record<string, { memorySize: number; timeout: number }> = {
      Migrator: { memorySize: 512, timeout: 300 },
      FanOut: { memorySize: 1769, timeout: functionTimeoutSeconds.fanOut },
    };
    for (const fn of functions) {
      const size = sizes[fn.id] ?? (hub.has(fn.id) ? { memorySize: 512, timeout: 10 } : { memorySize: 1024, timeout: 15 });
      expect(fn.lambda, fn.id).toMatchObject({ runtime: lambdaRuntime, architectures: ['arm64'], packageType: 'Zip', ...size });
      // AWS's limits: CreateFunction rejects a longer description, a larger environment, a longer name.
      expect(fn.lambda.description?.length ?? 0, fn.id).toBeLessThanOrEqual(256);
      expect(Buffer.byteLength(JSON.stringify(fn.environment)), fn.id).toBeLessThanOrEqual(4096);
      expect(fn.lambda.name.length, fn.id).toBeLessThanOrEqual(64);
      expect(fn.roleName.length, fn.id).toBeLessThanOrEqual(64);
      // Only Lambda may assume a function's role (SST's default also trusts the account root).
      expect(JSON.parse(fn.trustPolicy), fn.id).toMatchObject({
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
      });
      expect(fn.trustPolicy, fn.id).not.toContain(':root');
      // The code Lambda runs: the bundle SST built, ESM, minified.
      const listing = execFileSync('unzip', ['-Z1', fn.build.zip]).toString().split('\n');
      const bundle = `${fn.lambda.handler.slice(0, fn.lambda.handler.lastIndexOf('.'))}.mjs`;
      expect(listing, fn.id).toContain(bundle);
      expect(listing, fn.id).toContain('resource.enc');
      const code = execFileSync('unzip', ['-p', fn.build.zip, bundle]).toString();
      expect(code.split('\n').length, `${fn.id} is minified`).toBeLessThan(200);
    }
  });

  it('gives each request’s retries and the token check room to answer inside the function’s timeout', () => {
    // The JWKS fetch (3 s) and the rest of the request besides the database's bound.
    for (const fn of deployedFunctions(deployed('dev')).filter((each) => !['Migrator', 'FanOut'].includes(each.id))) {
      expect(attemptBoundMs).toBeLessThanOrEqual(databaseLimits.unavailableWithinMs);
      expect(databaseLimits.unavailableWithinMs + 3_000, fn.id).toBeLessThan(fn.lambda.timeout * 1000);
    }
  });

  it('reads its configuration from what SST links into its code: database, table, identity project, CORS, origin secret', () => {
    const result = deployed('dev');
    const table = state(only(result, 'aws:dynamodb/table:Table'));
    const databaseUrl = createdDatabaseUrl(result);
    const originSecret = String(state(only(result, 'random:index/randomPassword:RandomPassword', 'OriginVerifySecret')).result);
    for (const fn of deployedFunctions(result)) {
      const config = lambdaConfig(fn);
      expect(config.DATABASE_URL, fn.id).toBe(databaseUrl);
      expect(config.DYNAMODB_TABLE, fn.id).toBe(table.name);
      expect(config.DYNAMODB_ENDPOINT, fn.id).toBeUndefined();
      expect(config.IDP_PROJECT_ID, fn.id).toBe('hatchery-prod-7f3a');
      expect(config.CORS_ORIGINS, fn.id).toEqual(['https://app.example.com', 'https://admin.example.com']);
      expect(config.CORS_ALLOWED_HOST_SUFFIXES, fn.id).toEqual(['.example.org']);
      expect(config.ORIGIN_VERIFY_SECRET, fn.id).toBe(originSecret);
      // SST grants a linked table's access with the link.
      expect(allows(fn.statements, 'dynamodb:UpdateItem', String(table.arn)), fn.id).toBe(true);
    }
  });

  it('keeps every secret out of plain text: secret values reach code only sealed, and never sit in unmarked inputs', () => {
    const result = deployed('dev');
    const password = String(state(only(result, 'random:index/randomPassword:RandomPassword', 'DatabasePassword')).result);
    const originSecret = String(state(only(result, 'random:index/randomPassword:RandomPassword', 'OriginVerifySecret')).result);
    const values = [secrets.SST_SECRET_IdpProjectId, password, originSecret];
    const leaks = result.resources
      .filter((resource) => !['sst:sst:Secret', 'sst:sst:Linkable', 'sst:sst:LinkRef'].includes(resource.type) && !resource.type.startsWith('random:'))
      .flatMap((resource) =>
        plainStrings(resource.inputs)
          .filter(([, text]) => values.some((value) => text.includes(value)))
          .map(([path]) => `${resource.name}${path}`),
      );
    // Known and accepted: the router's CloudFront Function must carry the origin secret in its code (SST builds the
    // code inside an apply, which drops the secret marker); docker-build marks an image's build `secrets` secret in its
    // provider schema, which the mocks do not read.
    expect(leaks.sort()).toEqual(['ListenerImageListener.secrets.SST_RESOURCE_DatabaseUrl', 'RouterCloudfrontFunctionRequest.code']);
    const code = String(inputs(only(result, 'aws:cloudfront/function:Function', 'RouterCloudfrontFunctionRequest')).code);
    expect(code).toContain(originSecret);
    expect(code).not.toContain(password);
  });

  it('is traced by X-Ray: active tracing, and a role that may send the segments', () => {
    for (const name of ['dev', 'existingDatabase'] as const) {
      for (const fn of deployedFunctions(deployed(name))) {
        expect(fn.lambda.tracingConfig, `${name} ${fn.id}`).toEqual({ mode: 'Active' });
        for (const action of ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'])
          expect(allows(fn.statements, action, '*'), `${name} ${fn.id} ${action}`).toBe(true);
      }
    }
  });
});

describe('the database', () => {
  it('is PostgreSQL behind RDS Proxy in the VPC’s private subnets, its URL linked with TLS verified', () => {
    const result = deployed('dev');
    const instance = inputs(only(result, 'aws:rds/instance:Instance'));
    expect(instance.engine).toBe('postgres');
    expect(instance.publiclyAccessible).not.toBe(true);
    const subnetGroup = inputs<{ subnetIds: string[] }>(only(result, 'aws:rds/subnetGroup:SubnetGroup'));
    expect(subnetGroup.subnetIds.sort()).toEqual(privateSubnetIds(result).sort());
    expect(inputs(only(result, 'aws:rds/proxy:Proxy')).vpcSubnetIds).toEqual(expect.arrayContaining(privateSubnetIds(result)));
    expect(only(result, 'aws:rds/proxyTarget:ProxyTarget')).toBeDefined();
    for (const fn of deployedFunctions(result)) expect(lambdaConfig(fn).DATABASE_URL, fn.id).toBe(createdDatabaseUrl(result));
  });

  it('keeps a final snapshot when any stage’s database is deleted, named once per instance', () => {
    for (const name of ['dev', 'prod'] as const) {
      const instance = inputs(only(deployed(name), 'aws:rds/instance:Instance'));
      expect(instance.skipFinalSnapshot, name).toBe(false);
      expect(String(instance.finalSnapshotIdentifier), name).toMatch(new RegExp(`^hatchery-${name}-final-[0-9a-f]{8}$`));
    }
  });

  it('is migrated on every deploy, only once the database component (instance, proxy and its target) exists', () => {
    const result = deployed('dev');
    const invocation = only(result, 'aws:lambda/invocation:Invocation');
    expect(invocation.dependsOn).toEqual(expect.arrayContaining(['Migrator', 'Database']));
    const migrator = deployedFunctions(result).find((fn) => fn.id === 'Migrator')!;
    expect(inputs(invocation).functionName).toBe(migrator.lambda.name);
    expect(migrator.build.source).toBe('infra/handlers/migrate.handler');
    // The SQL files travel in the function's code beside its bundle.
    const listing = execFileSync('unzip', ['-Z1', migrator.build.zip]).toString();
    expect(listing).toMatch(/^migrations\/\d+_\w+\.sql$/m);
    const again = deployed('prod');
    expect(inputs(only(again, 'aws:lambda/invocation:Invocation')).triggers).not.toEqual(inputs(invocation).triggers);
  });

  it('uses the existing database named by the DatabaseUrl secret instead, creating none', () => {
    const result = deployed('existingDatabase');
    expect(ofType(result, 'aws:rds/instance:Instance')).toEqual([]);
    expect(ofType(result, 'aws:rds/proxy:Proxy')).toEqual([]);
    expect(only(result, 'aws:lambda/invocation:Invocation').dependsOn).toEqual(['Migrator']);
    for (const fn of deployedFunctions(result)) expect(lambdaConfig(fn).DATABASE_URL, fn.id).toBe(existingDatabaseUrl);
    expect(listenerConfig(result).DATABASE_URL).toBe(existingDatabaseUrl);
  });
});

describe('the DynamoDB table', () => {
  it('is the table the local stack creates: keys, on-demand billing, TTL', () => {
    const table = inputs(only(deployed('dev'), 'aws:dynamodb/table:Table'));
    const expected = createTableInput(String(table.name));
    expect(table).toMatchObject({
      billingMode: expected.BillingMode,
      hashKey: tableDefinition.partitionKey.name,
      rangeKey: tableDefinition.sortKey.name,
      ttl: { attributeName: tableDefinition.ttlAttribute, enabled: true },
    });
    expect(table.attributes).toEqual(expected.AttributeDefinitions!.map((definition) => ({ name: definition.AttributeName, type: definition.AttributeType })));
  });
});

/** The listener's container environment, as its task definition gives it. */
function listenerEnvironment(result: DeployResult): Record<string, string> {
  const definitions = JSON.parse(String(inputs(only(result, 'aws:ecs/taskDefinition:TaskDefinition')).containerDefinitions)) as {
    environment: { name: string; value: string }[];
  }[];
  return Object.fromEntries(definitions[0]!.environment.map(({ name, value }) => [name, value]));
}
/** The links SST gives a container, as `Resource` from `sst/resource` reads them: SST_RESOURCE_<Name> = JSON. */
const containerLinks = (env: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(env).flatMap(([key, value]) => (key.startsWith('SST_RESOURCE_') ? [[key.slice('SST_RESOURCE_'.length), JSON.parse(value)]] : [])),
  );
const listenerConfig = (result: DeployResult) => {
  const env = listenerEnvironment(result);
  return readSettings(configSchema, env, containerLinks(env));
};

interface MetricFilter {
  name: string;
  logGroupName: string;
  pattern: string;
  metricTransformation: { namespace: string; name: string; value: string; unit: string; dimensions: Record<string, string> };
}
const listenerFilters = (result: DeployResult) =>
  ofType(result, 'aws:cloudwatch/logMetricFilter:LogMetricFilter').map((filter) => inputs<MetricFilter>(filter));

/** What the listener prints for a read that answers a notification and posts one event of each kind. */
function listenerLines(): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  setEmfSink((document) => lines.push({ ...document }));
  try {
    const measured = listenerMetrics(createMetrics());
    measured.notified();
    const read = measured.readStarted();
    measured.delivered('marketChanged', { sent: 3, gone: 1, failed: 0, skipped: 0 }, performance.now());
    measured.delivered('forgeFulfilled', { sent: 1, gone: 0, failed: 0, skipped: 0 }, performance.now());
    read.finished(true);
    measured.indexerLag(12);
  } finally {
    setEmfSink(undefined);
  }
  return lines;
}

/** A JSON path of the form the filters use (`$.name`). */
const field = (line: Record<string, unknown>, path: string) => line[path.replace(/^\$\./, '')];

/** CloudWatch Logs' reading of the one pattern form the filters use: `{ ($.a = "text") && ($.b = *) }`. */
function matches(pattern: string, line: Record<string, unknown>): boolean {
  const parsed = /^\{ \((\$\.\w+) = "([^"]*)"\) && \((\$\.\w+) = \*\) \}$/.exec(pattern);
  if (!parsed) throw new Error(`a pattern of another form: ${pattern}`);
  const [, equalPath, text, presentPath] = parsed;
  return field(line, equalPath!) === text && field(line, presentPath!) !== undefined;
}

describe('the listener', () => {
  it('runs one Fargate task in the private subnets with no public IP, so it leaves through the NAT gateways', () => {
    const result = deployed('dev');
    const service = inputs<{ desiredCount?: number; networkConfiguration: { assignPublicIp: boolean; subnets: string[] } }>(
      only(result, 'aws:ecs/service:Service'),
    );
    const privateSubnets = privateSubnetIds(result);
    expect(service.networkConfiguration.assignPublicIp).toBe(false);
    expect(service.networkConfiguration.subnets.sort()).toEqual(privateSubnets.sort());
    expect(privateSubnets).toHaveLength(2);
    expect(inputs(only(result, 'aws:appautoscaling/target:Target'))).toMatchObject({ minCapacity: 1, maxCapacity: 1 });
    const task = inputs(only(result, 'aws:ecs/taskDefinition:TaskDefinition'));
    expect(task).toMatchObject({ cpu: '1024', memory: '2048', runtimePlatform: { cpuArchitecture: 'X86_64' } });
  });

  it('builds its image on the project’s Node: the Dockerfile’s base image takes the major from infra/runtime.ts', () => {
    const image = inputs<{ buildArgs?: Record<string, string>; dockerfile?: { location?: string } }>(only(deployed('dev'), 'docker-build:index:Image'));
    expect(image.buildArgs).toMatchObject({ NODE_MAJOR: String(nodeMajor) });
    expect(image.dockerfile?.location).toMatch(/packages\/listener\/Dockerfile$/);
  });

  it('reads the database, the table, the hub’s management endpoint and the region from its environment, and may post to the hub', () => {
    const result = deployed('dev');
    const config = listenerConfig(result);
    expect(config.DATABASE_URL).toBe(createdDatabaseUrl(result));
    expect(config.DYNAMODB_TABLE).toBe(state(only(result, 'aws:dynamodb/table:Table')).name);
    expect(config.AWS_REGION).toBe('eu-west-1');
    expect(config.WEBSOCKET_MANAGEMENT_ENDPOINT).toMatch(/^https:\/\/\w+\.execute-api\.eu-west-1\.amazonaws\.com\/\$default$/);
    expect(config).toMatchObject({ FANOUT_POSTS_PER_SECOND: 5_000, FANOUT_MIN_INTERVAL_MS: 1_000 });
    expect(listenerConfig(deployed('tuned'))).toMatchObject({ FANOUT_POSTS_PER_SECOND: 2_000, FANOUT_MIN_INTERVAL_MS: 60_000 });
    const taskRole = ofType(result, 'aws:iam/role:Role').find((role) => role.name === 'ListenerTaskRole')!;
    const statements = (inputs<{ inlinePolicies: { policy: string }[] }>(taskRole).inlinePolicies ?? []).flatMap(
      (policy) => (JSON.parse(policy.policy) as { Statement: DeployedFunction['statements'] }).Statement,
    );
    expect(allows(statements, 'execute-api:ManageConnections', `${String(state(hubApi(result)).executionArn)}/$default/POST/@connections/abc=`)).toBe(true);
    expect(allows(statements, 'dynamodb:Query', String(state(only(result, 'aws:dynamodb/table:Table')).arn))).toBe(true);
  });

  it('reads the indexer schema the deploy names (INDEXER_SCHEMA), as every function does', () => {
    expect(listenerConfig(deployed('dev')).INDEXER_SCHEMA).toBe('indexer');
    const tuned = deployed('tuned');
    expect(listenerConfig(tuned).INDEXER_SCHEMA).toBe('game_views');
    for (const fn of deployedFunctions(tuned)) expect(lambdaConfig(fn).INDEXER_SCHEMA, fn.id).toBe('game_views');
  });

  it('hands large broadcasts to the fan-out function: invocations it may make, each shard posted through the management API', () => {
    const result = deployed('dev');
    const fanOut = deployedFunctions(result).find((fn) => fn.build.source === fanOutHandler)!;
    expect(fanOut.id).toBe('FanOut');
    expect(listenerConfig(result).FANOUT_FUNCTION_NAME).toBe(fanOut.lambda.name);
    const taskRole = ofType(result, 'aws:iam/role:Role').find((role) => role.name === 'ListenerTaskRole')!;
    const statements = (inputs<{ inlinePolicies: { policy: string }[] }>(taskRole).inlinePolicies ?? []).flatMap(
      (policy) => (JSON.parse(policy.policy) as { Statement: DeployedFunction['statements'] }).Statement,
    );
    expect(allows(statements, 'lambda:InvokeFunction', fanOut.arn)).toBe(true);
    const executionArn = String(state(hubApi(result)).executionArn);
    expect(allows(fanOut.statements, 'execute-api:ManageConnections', `${executionArn}/$default/POST/@connections/abc=`)).toBe(true);
    expect(allows(fanOut.statements, 'dynamodb:Query', String(state(only(result, 'aws:dynamodb/table:Table')).arn))).toBe(true);
    expect(lambdaConfig(fanOut).WEBSOCKET_MANAGEMENT_ENDPOINT).toMatch(/execute-api/);
    const invokeConfig = ofType(result, 'aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig').map((each) => inputs(each));
    // The listener invokes it synchronously and retries a failed shard itself: an asynchronous invocation is no one's, and never retried.
    expect(invokeConfig).toEqual([expect.objectContaining({ functionName: fanOut.lambda.name, maximumRetryAttempts: 0 })]);
  });

  it('publishes its metrics to CloudWatch with a log metric filter per metric on its container’s log group, as its EMF lines carry them', () => {
    const result = deployed('dev');
    const [container] = JSON.parse(String(inputs(only(result, 'aws:ecs/taskDefinition:TaskDefinition')).containerDefinitions)) as {
      logConfiguration: { logDriver: string; options: Record<string, string> };
    }[];
    expect(container!.logConfiguration.logDriver).toBe('awslogs');
    const group = container!.logConfiguration.options['awslogs-group'];
    expect(ofType(result, 'aws:cloudwatch/logGroup:LogGroup').filter((each) => inputs(each).name === group)).toHaveLength(1);
    const filters = listenerFilters(result);
    // The webhooks' metrics come with the endpoints a stage declares (test/deploy/webhooks.test.ts); these declare none.
    const { webhook: _webhook, ...documents } = listenerDocuments;
    const published = Object.values(documents).flatMap(({ metrics }) => [...metrics]);
    expect(filters.map((filter) => filter.name).sort()).toEqual([...published].sort());
    for (const [document, { dimensions, metrics }] of Object.entries(documents)) {
      for (const name of metrics) {
        expect(
          filters.find((filter) => filter.name === name),
          `${document} ${name}`,
        ).toEqual({
          name,
          logGroupName: group,
          pattern: `{ ($.service = "hatchery") && ($.${name} = *) }`,
          metricTransformation: {
            namespace: 'Hatchery/dev',
            name,
            value: `$.${name}`,
            unit: metricCatalog[name].unit,
            dimensions: Object.fromEntries(['service', ...dimensions].map((dimension) => [dimension, `$.${dimension}`])),
          },
        });
      }
    }
    // The listener's real EMF lines: every filter matches one, and finds its value and dimensions in it, as CloudWatch Logs would.
    const lines = listenerLines();
    for (const filter of filters) {
      const matched = lines.filter((line) => matches(filter.pattern, line));
      expect(matched.length, filter.name).toBeGreaterThan(0);
      for (const line of matched) {
        expect(typeof field(line, filter.metricTransformation.value), filter.name).toBe('number');
        for (const path of Object.values(filter.metricTransformation.dimensions)) expect(typeof field(line, path), `${filter.name} ${path}`).toBe('string');
        // EMF would publish it with the same unit and the same dimensions.
        const directive = (line._aws as { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] }).CloudWatchMetrics[0]!;
        expect(directive.Metrics.find((metric) => metric.Name === filter.name)?.Unit).toBe(filter.metricTransformation.unit);
        expect(directive.Dimensions.map((set) => [...set].sort())).toEqual([Object.keys(filter.metricTransformation.dimensions).sort()]);
      }
    }
    expect(ofType(deployed('tuned'), 'aws:cloudwatch/logMetricFilter:LogMetricFilter')).toHaveLength(published.length);
  });

  it('adds a warm standby task when asked', () => {
    expect(inputs(only(deployed('tuned'), 'aws:appautoscaling/target:Target'))).toMatchObject({ minCapacity: 2, maxCapacity: 2 });
  });
});

describe('the network', () => {
  it('has two availability zones of private subnets behind managed NAT gateways, or NAT instances when asked', () => {
    const managed = deployed('dev');
    expect(ofType(managed, 'aws:ec2/natGateway:NatGateway')).toHaveLength(2);
    const ec2 = deployed('tuned');
    expect(ofType(ec2, 'aws:ec2/natGateway:NatGateway')).toEqual([]);
    expect(ofType(ec2, 'aws:ec2/instance:Instance').length).toBeGreaterThanOrEqual(1);
  });
});

/** CloudFront's KeyValueStore as the router's deploy fills it: its keys, and the route list each route adds to. */
function routerKeyValues(result: DeployResult): Map<string, string> {
  const entries = new Map<string, string>();
  const routeLists = new Map<string, string[]>();
  for (const resource of ofType(result, 'pulumi-nodejs:dynamic:Resource')) {
    const args = reveal<Record<string, unknown>>(resource.inputs);
    if (resource.name.endsWith('.sst.aws.KvKeys')) {
      for (const [key, value] of Object.entries(args.entries as Record<string, string>)) entries.set(`${String(args.namespace)}:${key}`, value);
    } else if (resource.name.endsWith('.sst.aws.KvRoutesUpdate')) {
      const key = `${String(args.namespace)}:${String(args.key)}`;
      routeLists.set(key, [...(routeLists.get(key) ?? []), String(args.entry)]);
    }
  }
  for (const [key, list] of routeLists) entries.set(key, JSON.stringify(list));
  return entries;
}

/** Runs the router's viewer-request CloudFront Function on a request, with the store's entries: where it sends the request, and how. */
async function routeThroughRouter(result: DeployResult, uri: string): Promise<{ origin?: string; uri: string; headers: Record<string, { value: string }> }> {
  const code = String(inputs(only(result, 'aws:cloudfront/function:Function', 'RouterCloudfrontFunctionRequest')).code);
  const store = routerKeyValues(result);
  let origin: string | undefined;
  const cf = {
    kvs: () => ({ get: async (key: string) => (store.has(key) ? store.get(key)! : Promise.reject(new Error(`key not found: ${key}`))) }),
    updateRequestOrigin: (params: { domainName: string }) => (origin = params.domainName),
  };
  const handler = new Function('cf', `${code.replace(/^\s*import cf from "cloudfront";/m, '')}\nreturn handler;`)(cf) as (
    event: unknown,
  ) => Promise<{ uri: string; headers: Record<string, { value: string }> }>;
  const request = await handler({ request: { uri, method: 'GET', headers: { host: { value: 'api.example.com' } }, querystring: {}, cookies: {} } });
  return { origin, uri: request.uri, headers: request.headers };
}

describe('the router', () => {
  it('sends the hub’s path to the WebSocket API’s stage and everything else, negotiate included, to the HTTP API', async () => {
    const result = deployed('dev');
    const httpHost = new URL(String(state(httpApi(result)).apiEndpoint)).host;
    const hubHost = new URL(String(state(hubApi(result)).apiEndpoint)).host;
    const stage = String(inputs(only(result, 'aws:apigatewayv2/stage:Stage', 'HubStage')).name);
    expect(await routeThroughRouter(result, hubPath)).toMatchObject({ origin: hubHost, uri: `/${stage}` });
    for (const uri of [`${hubPath}/negotiate`, '/editions', '/openapi.json', '/accounts/me/wallet/nonce', '/no/such/path', `${hubPath}x`]) {
      expect(await routeThroughRouter(result, uri), uri).toMatchObject({ origin: httpHost, uri });
    }
  });

  it('adds the stage’s origin-verification secret to every request, the value the functions require', async () => {
    const result = deployed('dev');
    const secret = String(state(only(result, 'random:index/randomPassword:RandomPassword', 'OriginVerifySecret')).result);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    for (const uri of [hubPath, '/editions']) expect((await routeThroughRouter(result, uri)).headers[originVerifyHeader], uri).toEqual({ value: secret });
    expect(configSchema.shape.ORIGIN_VERIFY_SECRET.safeParse(secret).success).toBe(true);
  });

  it('never caches an error response at the edge, and keys cached responses on the caller and the origin', () => {
    const result = deployed('dev');
    const distribution = inputs<{
      customErrorResponses: { errorCode: number; errorCachingMinTtl: number }[];
      defaultCacheBehavior: { cachePolicyId: string; responseHeadersPolicyId: string };
    }>(only(result, 'aws:cloudfront/distribution:Distribution'));
    expect(distribution.customErrorResponses.map((response) => response.errorCode)).toEqual([400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504]);
    expect(distribution.customErrorResponses.every((response) => response.errorCachingMinTtl === 0)).toBe(true);
    const policy = ofType(result, 'aws:cloudfront/cachePolicy:CachePolicy').find((each) => each.id === distribution.defaultCacheBehavior.cachePolicyId)!;
    const { parametersInCacheKeyAndForwardedToOrigin: parameters } = inputs<{
      parametersInCacheKeyAndForwardedToOrigin: {
        headersConfig: { headerBehavior: string; headers: { items: string[] } };
        queryStringsConfig: { queryStringBehavior: string };
      };
    }>(policy);
    expect(parameters.headersConfig.headerBehavior).toBe('whitelist');
    expect(parameters.headersConfig.headers.items).toEqual(expect.arrayContaining(['authorization', 'origin']));
    expect(parameters.queryStringsConfig.queryStringBehavior).toBe('all');
  });

  it('adds HSTS and nosniff to every response with a response-headers policy', () => {
    const result = deployed('dev');
    const distribution = inputs<{ defaultCacheBehavior: { responseHeadersPolicyId: string } }>(only(result, 'aws:cloudfront/distribution:Distribution'));
    const policy = only(result, 'aws:cloudfront/responseHeadersPolicy:ResponseHeadersPolicy');
    expect(policy.id).toBe(distribution.defaultCacheBehavior.responseHeadersPolicyId);
    expect(inputs(policy)).toMatchObject({
      securityHeadersConfig: { strictTransportSecurity: { accessControlMaxAgeSec: 31_536_000, override: true }, contentTypeOptions: { override: true } },
    });
  });

  it('limits each client IP with a WAF rate rule whenever the limit is above 0, and each API stage as a whole', () => {
    const rateLimit = (result: DeployResult) => {
      const acl = inputs<{ rules: { statement: { rateBasedStatement?: { limit: number; aggregateKeyType: string } } }[] }>(
        only(result, 'aws:wafv2/webAcl:WebAcl'),
      );
      expect(inputs(only(result, 'aws:cloudfront/distribution:Distribution')).webAclId).toBe(state(only(result, 'aws:wafv2/webAcl:WebAcl')).arn);
      return acl.rules.find((rule) => rule.statement.rateBasedStatement)!.statement.rateBasedStatement;
    };
    // IP_RATE_LIMIT_PER_SECOND's default (200), over WAF's five-minute window.
    expect(rateLimit(deployed('dev'))).toMatchObject({ limit: 60_000, aggregateKeyType: 'IP' });
    expect(rateLimit(deployed('tuned'))).toMatchObject({ limit: 6_000, aggregateKeyType: 'IP' });
    const off = deployed('wafOff');
    expect(ofType(off, 'aws:wafv2/webAcl:WebAcl')).toEqual([]);
    expect(inputs(only(off, 'aws:cloudfront/distribution:Distribution')).webAclId).toBeUndefined();
    for (const [name, rate] of [
      ['dev', 1000],
      ['tuned', 300],
    ] as const) {
      for (const stage of ofType(deployed(name), 'aws:apigatewayv2/stage:Stage')) {
        expect(inputs(stage).defaultRouteSettings, `${name} ${stage.name}`).toMatchObject({ throttlingRateLimit: rate, throttlingBurstLimit: rate * 2 });
      }
    }
  });

  it('counts every request but GET /health in the WAF rate rule: a scope-down of NOT (URI path exactly /health)', () => {
    for (const name of ['dev', 'tuned'] as const) {
      const { rules } = inputs<{
        rules: { name: string; statement: { rateBasedStatement?: { scopeDownStatement?: unknown }; managedRuleGroupStatement?: unknown } }[];
      }>(only(deployed(name), 'aws:wafv2/webAcl:WebAcl'));
      const rated = rules.filter((rule) => rule.statement.rateBasedStatement);
      expect(
        rated.map((rule) => rule.name),
        name,
      ).toEqual(['RateLimitPerIP']);
      expect(rated[0]!.statement.rateBasedStatement!.scopeDownStatement, name).toEqual({
        notStatement: {
          statements: [
            {
              byteMatchStatement: {
                fieldToMatch: { uriPath: {} },
                positionalConstraint: 'EXACTLY',
                searchString: httpRoutes.health.path,
                textTransformations: [{ priority: 0, type: 'NONE' }],
              },
            },
          ],
        },
      });
      expect(routeTable.filter((route) => route.ipRateLimited === false).map((route) => route.path)).toEqual(['/health']);
      // The managed rules still see /health: only the rate rule leaves it out.
      expect(rules.filter((rule) => rule.statement.managedRuleGroupStatement).length, name).toBeGreaterThan(0);
    }
  });

  it('outputs the base URL and the hub URL', () => {
    const result = deployed('dev');
    const domain = String(state(only(result, 'aws:cloudfront/distribution:Distribution')).domainName);
    expect(reveal(result.outputs)).toMatchObject({ url: `https://${domain}`, hubUrl: `https://${domain}${hubPath}` });
  });
});

describe('alarms and the dashboard', () => {
  const alarmsOf = (result: DeployResult) =>
    new Map(ofType(result, 'aws:cloudwatch/metricAlarm:MetricAlarm').map((alarm) => [alarm.name, inputs<Record<string, unknown>>(alarm)] as const));

  it('alarms on the 5xx rate, p99 latency, each function’s errors and throttles, the listener’s heartbeat and lag, and RDS Proxy’s connections, all to one SNS topic', () => {
    const result = deployed('dev');
    const alarms = alarmsOf(result);
    const topic = String(state(only(result, 'aws:sns/topic:Topic')).arn);
    const namespace = 'Hatchery/dev';
    expect(alarms.get('Http5xxRate')).toMatchObject({
      namespace,
      metricName: 'Responses5xx',
      dimensions: { service: 'hatchery' },
      statistic: 'Average',
      threshold: 0.05,
      comparisonOperator: 'GreaterThanThreshold',
    });
    expect(alarms.get('HttpLatencyP99')).toMatchObject({ namespace, metricName: 'Latency', extendedStatistic: 'p99', threshold: 2000 });
    expect(alarms.get('ListenerHeartbeatMissing')).toMatchObject({
      namespace,
      metricName: 'ListenerHeartbeat',
      statistic: 'Sum',
      threshold: 1,
      comparisonOperator: 'LessThanThreshold',
      evaluationPeriods: 3,
      treatMissingData: 'breaching',
    });
    expect(alarms.get('ListenerLag')).toMatchObject({ namespace, metricName: 'ListenerLag', statistic: 'Maximum', threshold: 10_000 });
    expect(alarms.get('IndexerLag')).toMatchObject({
      namespace,
      metricName: 'IndexerLag',
      statistic: 'Maximum',
      threshold: 300,
      treatMissingData: 'notBreaching',
    });
    const connections = alarms.get('DatabaseConnections') as {
      metricQueries: { metric?: { metricName: string; dimensions: { ProxyName: string } } }[];
      threshold: number;
    };
    expect(connections.threshold).toBe(80);
    // RDS Proxy publishes both metrics with the dimension set ProxyName alone (among others): the ratio is over that set exactly.
    const proxyName = String(inputs(only(result, 'aws:rds/proxy:Proxy')).name);
    expect(connections.metricQueries.flatMap((query) => (query.metric ? [[query.metric.metricName, query.metric.dimensions]] : []))).toEqual([
      ['DatabaseConnections', { ProxyName: proxyName }],
      ['MaxDatabaseConnectionsAllowed', { ProxyName: proxyName }],
    ]);
    for (const fn of deployedFunctions(result)) {
      for (const metricName of ['Errors', 'Throttles']) {
        const alarm = [...alarms.values()].find(
          (each) =>
            each.namespace === 'AWS/Lambda' && each.metricName === metricName && (each.dimensions as { FunctionName: string }).FunctionName === fn.lambda.name,
        );
        expect(alarm, `${metricName} of ${fn.id}`).toMatchObject({ statistic: 'Sum', threshold: 0 });
      }
    }
    for (const [name, alarm] of alarms) expect(alarm.alarmActions, name).toEqual([topic]);
    // The service's metrics land in the namespace the alarms watch.
    for (const fn of deployedFunctions(result)) expect(fn.environment.METRICS_NAMESPACE, fn.id).toBe(namespace);
    expect(listenerEnvironment(result).METRICS_NAMESPACE).toBe(namespace);
    expect(ofType(result, 'aws:sns/topicSubscription:TopicSubscription')).toEqual([]);
    const dashboard = JSON.parse(String(inputs(only(result, 'aws:cloudwatch/dashboard:Dashboard')).dashboardBody)) as {
      widgets: { properties: { title: string } }[];
    };
    expect(dashboard.widgets.map((widget) => widget.properties.title)).toEqual(
      expect.arrayContaining(['Requests and status classes', 'Listener', 'Indexer lag behind its chain (s)', 'RDS Proxy connections']),
    );
  });

  it('watches the listener’s metrics exactly as its log metric filters publish them: namespace, name and dimensions', () => {
    for (const name of ['dev', 'tuned'] as const) {
      const result = deployed(name);
      const filters = listenerFilters(result);
      const listenerAlarms = [...alarmsOf(result)].filter(([, alarm]) => /^(Listener|Indexer)/.test(String(alarm.metricName)));
      expect(listenerAlarms.map(([alarmName]) => alarmName).sort(), name).toEqual(['IndexerLag', 'ListenerHeartbeatMissing', 'ListenerLag']);
      for (const [alarmName, alarm] of listenerAlarms) {
        const filter = filters.find((each) => each.metricTransformation.name === alarm.metricName && each.metricTransformation.namespace === alarm.namespace);
        expect(filter, `${name} ${alarmName}`).toBeDefined();
        const dimensions = alarm.dimensions as Record<string, string>;
        expect(Object.keys(dimensions).sort(), `${name} ${alarmName}`).toEqual(Object.keys(filter!.metricTransformation.dimensions).sort());
        // The value the filter's pattern requires of the line is the one the alarm asks for.
        expect(filter!.pattern).toContain(`($.service = "${dimensions.service}")`);
      }
    }
  });

  it('shows the listener’s and the fan-out function’s figures by event kind on the dashboard, each as it is published', () => {
    const result = deployed('dev');
    const dashboard = JSON.parse(String(inputs(only(result, 'aws:cloudwatch/dashboard:Dashboard')).dashboardBody)) as {
      widgets: { properties: { title: string; metrics: (string | object)[][] } }[];
    };
    const shown = dashboard.widgets.flatMap((widget) => widget.properties.metrics).filter((metric) => metric[0] === 'Hatchery/dev');
    const filters = listenerFilters(result);
    const dimensionNames = (metric: (string | object)[]) =>
      metric.slice(2).filter((part, index): part is string => typeof part === 'string' && index % 2 === 0);
    for (const metric of shown) {
      const name = metric[1] as MetricName;
      expect(metricCatalog[name], name).toBeDefined();
      const filter = filters.find((each) => each.name === name);
      if (filter) expect(dimensionNames(metric).sort(), name).toEqual(Object.keys(filter.metricTransformation.dimensions).sort());
    }
    const byKind = (name: string) => shown.filter((metric) => metric[1] === name).map((metric) => metric[5]);
    for (const name of [
      'ListenerEvents',
      'ListenerPostsSent',
      'ListenerGoneConnections',
      'ListenerFailedPosts',
      'ListenerFanOutTime',
      'FanOutShardTime',
      'FanOutSkippedPosts',
      'UndeliveredPosts',
    ]) {
      expect(byKind(name).sort(), name).toEqual(['forgeFulfilled', 'marketChanged']);
    }
  });

  it('takes its thresholds and subscriber from the deploy settings; a stage on an existing database has no proxy alarm', () => {
    const tuned = alarmsOf(deployed('tuned'));
    expect(tuned.get('Http5xxRate')).toMatchObject({ threshold: 0.01 });
    expect(tuned.get('ListenerLag')).toMatchObject({ threshold: 5000 });
    expect(tuned.get('IndexerLag')).toMatchObject({ threshold: 120 });
    expect(inputs(only(deployed('tuned'), 'aws:sns/topicSubscription:TopicSubscription'))).toMatchObject({ protocol: 'email', endpoint: 'oncall@example.com' });
    expect(alarmsOf(deployed('existingDatabase')).has('DatabaseConnections')).toBe(false);
  });
});

describe('stages', () => {
  it('keeps the data of the prod stage and protects it; other stages are removed whole', () => {
    const prod = deployed('prod');
    expect(prod.app).toMatchObject({ name: 'hatchery', removal: 'retain', protect: true });
    for (const type of ['aws:rds/instance:Instance', 'aws:dynamodb/table:Table']) expect(only(prod, type).retainOnDelete, type).toBe(true);
    const dev = deployed('dev');
    expect(dev.app).toMatchObject({ removal: 'remove', protect: false });
    for (const type of ['aws:rds/instance:Instance', 'aws:dynamodb/table:Table']) expect(only(dev, type).retainOnDelete, type).toBe(false);
  });

  // An invalid setting stops the deploy as test/deploy/webhooks.test.ts's refused declarations do; each setting's rule
  // is test/unit/infra/deploy-settings.test.ts's.
  it('fails the deploy with a clear message when a required secret is missing', () => {
    expect(deploys.missingSecret.error).toMatch(/IdpProjectId/);
    expect(deploys.missingSecret.error).toMatch(/sst secret set/);
  });
});

describe('upgrades (docs/deploying.md, Upgrading)', () => {
  it('delete or replace nothing that holds data: each variant’s stateful resources are the record’s, URNs and inputs', () => {
    if (process.env.UPDATE_STATEFUL_RECORD === '1') writeRecord(buildRecord(Object.fromEntries(recordedVariants.map((name) => [name, deployed(name)]))));
    const record = readRecord();
    expect(new Set(record.resources.flatMap((entry) => entry.variants))).toEqual(new Set(recordedVariants));
    expect(recordedVariants.flatMap((name) => dataLosingChanges(record, name, deployed(name)))).toEqual([]);
  });

  it('name the resource and what it holds when a transform renames the table, its key schema changes and the database gets another identifier', () => {
    const findings = dataLosingChanges(readRecord(), 'prod', deployed('dataLosing'));
    expect(findings).toContain(docBlock('upgrade-finding').text.trim());
    expect(findings).toEqual([
      expect.stringMatching(
        /^prod: aws:dynamodb\/table:Table TableTable's attributes changes from .*"pk".* to .*"connectionId".*: review what this does to the hub’s connections/,
      ),
      expect.stringMatching(
        /^prod: aws:dynamodb\/table:Table TableTable's hashKey changes from "pk" to "connectionId": the AWS provider replaces the resource on this input, deleting the hub’s connections and groups and the rate-limit counters\.$/,
      ),
      expect.stringMatching(
        /^prod: aws:dynamodb\/table:Table TableTable's name changes from "hatchery-<stage>-TableTable-<random>" to "hatchery-connections": the AWS provider replaces the resource/,
      ),
      expect.stringMatching(
        /^prod: aws:rds\/instance:Instance DatabaseInstance's identifier changes from "hatchery-<stage>-databaseinstance-<random>" to "hatchery-db-1": the AWS provider replaces the resource on this input, deleting the database: accounts, linked wallets/,
      ),
      expect.stringMatching(
        /^prod: aws:rds\/proxyTarget:ProxyTarget DatabaseProxyTarget's dbInstanceIdentifier changes from "hatchery-<stage>-databaseinstance-<random>" to "hatchery-db-1": the AWS provider replaces the resource on this input, deleting the proxy’s link to the instance/,
      ),
    ]);
  });

  it('find a stateful resource gone from the config, and one the record lacks', () => {
    const result = deployed('dev');
    const withoutTable = { ...result, resources: result.resources.filter((resource) => resource.type !== 'aws:dynamodb/table:Table') };
    expect(dataLosingChanges(readRecord(), 'dev', withoutTable)).toEqual([
      expect.stringMatching(/^dev: aws:dynamodb\/table:Table TableTable is gone .*: the deploy deletes it, and with it the hub’s connections/),
    ]);
    expect(dataLosingChanges(readRecord(), 'existingDatabase', result)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^existingDatabase: aws:rds\/instance:Instance DatabaseInstance holds the database.* and is not in the record: record it\.$/),
      ]),
    );
  });

  it('protect and retain every stateful resource in prod and production, so Pulumi refuses a replace there; other stages protect nothing', () => {
    for (const name of ['prod', 'dataLosing'] as const) {
      const stateful = deployed(name).resources.filter((resource) => resource.type in statefulResources);
      expect(stateful.length, name).toBeGreaterThan(30);
      for (const resource of stateful)
        expect({ name: resource.name, protect: resource.protect, retainOnDelete: resource.retainOnDelete }, name).toEqual({
          name: resource.name,
          protect: true,
          retainOnDelete: true,
        });
    }
    expect(deployed('dev').resources.filter((resource) => resource.protect)).toEqual([]);
  });
});
