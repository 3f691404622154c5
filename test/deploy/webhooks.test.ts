/**
 * The webhooks' deploy (infra/settings.ts, infra/webhooks.ts, infra/alarms.ts): `sst deploy` of sst.config.ts with
 * the endpoints docs/deploying.md declares, with none, and with declarations a deployed stage refuses (one refused as
 * written, one once its name resolves, one missing its secret), run against the real SST v4 components under Pulumi's
 * unit-test mocks as test/deploy/deploy.test.ts runs them. Each rule of the declaration is
 * test/unit/infra/deploy-settings.test.ts's.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSecretNames } from '@hatchery/platform/config/events';
import { listenerDocuments, metricCatalog, metricsService, setEmfSink } from '@hatchery/platform/telemetry/metrics';
import { webhookMetrics } from '@hatchery/listener/metrics';
import type { DeployResult } from './sst/deploy';
import { deployedFunctions, inputs, ofType, only, plainStrings, state } from './sst/deployed';
import { ensurePlatform, repositoryRoot } from './sst/platform';
import { runDeploys } from './sst/run';
import {
  declaration,
  declared,
  endpointNames,
  endpointSecrets,
  example,
  oneEndpoint,
  resolvesPrivate,
  signing,
  sstSecret,
  unsafeAddresses,
} from '../support/webhook-declarations';

const stageSecrets = { SST_SECRET_IdpProjectId: 'hatchery-dev-7f3a', SST_SECRET_CorsOrigins: '', SST_SECRET_CorsAllowedHostSuffixes: '' };

const variants = {
  declared: { stage: 'dev', env: { ...stageSecrets, ...endpointSecrets, HATCHERY_WEBHOOKS: declaration } },
  /** The example's first endpoint, with the event log's and the webhooks' settings chosen. */
  tuned: {
    stage: 'dev',
    env: {
      ...stageSecrets,
      ...endpointSecrets,
      HATCHERY_WEBHOOKS: JSON.stringify(declared.slice(0, 1)),
      EVENT_RETENTION_DAYS: '7',
      WEBHOOK_RETRY_HOURS: '48',
      HATCHERY_ALARM_WEBHOOK_PENDING_MINUTES: '30',
    },
  },
  none: { stage: 'dev', env: stageSecrets },
  missingSecret: {
    stage: 'dev',
    env: { ...stageSecrets, ...endpointSecrets, [sstSecret(webhookSecretNames('game').current)]: undefined, HATCHERY_WEBHOOKS: declaration },
  },
  /** A declaration refused as written (the rules: test/unit/infra/deploy-settings.test.ts), and one refused once its name resolves. */
  http: { stage: 'dev', env: { ...stageSecrets, ...endpointSecrets, HATCHERY_WEBHOOKS: oneEndpoint(unsafeAddresses.http.url) } },
  resolvesPrivate: { stage: 'dev', env: { ...stageSecrets, ...endpointSecrets, HATCHERY_WEBHOOKS: oneEndpoint(resolvesPrivate.url) } },
} as Record<string, { stage: string; env: Record<string, string | undefined> }>;

const deploys: Record<string, DeployResult> = {};

beforeAll(async () => {
  const started = performance.now();
  await ensurePlatform();
  const names = Object.keys(variants);
  const results = await runDeploys(
    names.map((name) => ({
      ...variants[name]!,
      env: Object.fromEntries(Object.entries(variants[name]!.env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    })),
  );
  names.forEach((name, index) => (deploys[name] = results[index]!));
  console.log(
    `Webhooks under Pulumi mocks: ${names.map((name) => `${name} ${deploys[name]!.error ? 'failed' : `${deploys[name]!.resources.length} resources`}`).join(', ')}; ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}, 600_000);

afterAll(() => {
  for (const result of Object.values(deploys)) if (result?.workDir) rmSync(result.workDir, { recursive: true, force: true });
});

function deployed(name: string): DeployResult {
  const result = deploys[name]!;
  expect(result.error, `${name}: ${result.error}`).toBeUndefined();
  return result;
}

/** The listener's container environment, as its task definition gives it. */
function listenerEnvironment(result: DeployResult): Record<string, string> {
  const definitions = JSON.parse(String(inputs(only(result, 'aws:ecs/taskDefinition:TaskDefinition')).containerDefinitions)) as {
    environment: { name: string; value: string }[];
  }[];
  return Object.fromEntries(definitions[0]!.environment.map(({ name, value }) => [name, value]));
}

/** What the listener's own options read in that environment, and nothing else of the test's (test/deploy/sst/listener-webhooks.ts). */
function listenerReads(result: DeployResult): { endpoints: ((typeof declared)[number] & { secrets: string[] })[]; deployed: boolean; retryWindowMs: number } {
  const output = execFileSync(join(repositoryRoot, 'node_modules/.bin/tsx'), [join(repositoryRoot, 'test/deploy/sst/listener-webhooks.ts')], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...listenerEnvironment(result) },
  });
  return JSON.parse(output.toString());
}

interface MetricFilter {
  name: string;
  logGroupName: string;
  pattern: string;
  metricTransformation: { namespace: string; name: string; value: string; unit: string; dimensions: Record<string, string> };
}
const filters = (result: DeployResult) => ofType(result, 'aws:cloudwatch/logMetricFilter:LogMetricFilter').map((filter) => inputs<MetricFilter>(filter));
const alarms = (result: DeployResult) =>
  new Map(ofType(result, 'aws:cloudwatch/metricAlarm:MetricAlarm').map((alarm) => [alarm.name, inputs<Record<string, unknown>>(alarm)] as const));
const dashboardWidgets = (result: DeployResult) =>
  (
    JSON.parse(String(inputs(only(result, 'aws:cloudwatch/dashboard:Dashboard')).dashboardBody)) as {
      widgets: { properties: { title: string; metrics: unknown[][]; stat: string } }[];
    }
  ).widgets;
const webhookSecrets = (result: DeployResult) =>
  ofType(result, 'sst:sst:Secret')
    .map((secret) => secret.name)
    .filter((name) => name.startsWith('Webhook'));

/** What the listener prints for one delivery, one failed attempt, one dead letter and one oldest-pending age of `endpoint`. */
function webhookLines(endpoint: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  setEmfSink((document) => lines.push({ ...document }));
  try {
    const metrics = webhookMetrics();
    metrics.delivered(endpoint);
    metrics.failedAttempt(endpoint);
    metrics.deadLettered(endpoint);
    metrics.oldestPending(endpoint, 42);
  } finally {
    setEmfSink(undefined);
  }
  return lines;
}

/** CloudWatch Logs' reading of the one pattern form the filters use: `{ ($.a = "text") && ($.b = *) }`. */
function matches(pattern: string, line: Record<string, unknown>): boolean {
  const parsed = /^\{ \(\$\.(\w+) = "([^"]*)"\) && \(\$\.(\w+) = \*\) \}$/.exec(pattern);
  if (!parsed) throw new Error(`a pattern of another form: ${pattern}`);
  const [, equalField, text, presentField] = parsed;
  return line[equalField!] === text && line[presentField!] !== undefined;
}

describe('a stage that declares webhook endpoints', () => {
  it('has each endpoint’s current and next secret as SST secrets, linked to the listener and to no function', () => {
    const result = deployed('declared');
    const names = endpointNames.flatMap((endpoint) => Object.values(webhookSecretNames(endpoint)));
    expect(webhookSecrets(result).sort()).toEqual([...names].sort());
    const links = Object.keys(listenerEnvironment(result)).filter((key) => key.startsWith('SST_RESOURCE_Webhook'));
    expect(links.sort()).toEqual(names.map((name) => `SST_RESOURCE_${name}`).sort());
    for (const fn of deployedFunctions(result))
      expect(
        Object.keys(fn.build.links).filter((name) => name.startsWith('Webhook')),
        fn.id,
      ).toEqual([]);
  });

  it('gives the listener the declaration without secrets, the deployed rules, the retention and the retry window; the listener reads each endpoint with the stage’s secrets', () => {
    const result = deployed('declared');
    const env = listenerEnvironment(result);
    expect(JSON.parse(env.WEBHOOK_ENDPOINTS!)).toEqual(declared);
    expect(env).toMatchObject({ WEBHOOK_DEPLOYED: 'true', EVENT_RETENTION_DAYS: '30', WEBHOOK_RETRY_HOURS: '24' });
    // `sst/resource` reads each linked secret from SST_RESOURCE_<Name>; an unset next secret is its default, empty, and signs nothing.
    expect(listenerReads(result)).toEqual({
      endpoints: declared.map((endpoint) => ({ ...endpoint, secrets: signing[endpoint.name] })),
      deployed: true,
      retryWindowMs: 24 * 3_600_000,
    });
    const tuned = deployed('tuned');
    expect(listenerEnvironment(tuned)).toMatchObject({ EVENT_RETENTION_DAYS: '7', WEBHOOK_RETRY_HOURS: '48' });
    expect(listenerReads(tuned)).toMatchObject({ endpoints: [{ name: 'game', secrets: signing.game }], retryWindowMs: 48 * 3_600_000 });
  });

  it('keeps the secrets out of plain text, but for the image build’s secrets SST hands every link to', () => {
    const result = deployed('declared');
    const values = Object.values(signing).flat();
    const leaks = result.resources
      .filter((resource) => !['sst:sst:Secret', 'sst:sst:Linkable', 'sst:sst:LinkRef'].includes(resource.type))
      .flatMap((resource) =>
        plainStrings(resource.inputs)
          .filter(([, text]) => values.some((value) => text.includes(value)))
          .map(([path]) => `${resource.name}${path}`),
      );
    // As for the database URL (test/deploy/deploy.test.ts): docker-build marks its `secrets` secret in a schema the mocks do not read.
    expect(leaks.sort()).toEqual(
      ['WebhookGameSecret', 'WebhookGameNextSecret', 'WebhookLeaderboardSecret'].map((name) => `ListenerImageListener.secrets.SST_RESOURCE_${name}`).sort(),
    );
  });

  it('publishes the webhook metrics by endpoint with a log metric filter each, as the listener’s EMF lines carry them', () => {
    const result = deployed('declared');
    const { dimensions, metrics } = listenerDocuments.webhook;
    const published = filters(result).filter((filter) => (metrics as readonly string[]).includes(filter.name));
    expect(published.map((filter) => filter.name).sort()).toEqual([...metrics].sort());
    const group = filters(result).find((filter) => filter.name === 'ListenerHeartbeat')!.logGroupName;
    const lines = webhookLines('game');
    for (const filter of published) {
      expect(filter).toEqual({
        name: filter.name,
        logGroupName: group,
        pattern: `{ ($.service = "${metricsService}") && ($.${filter.name} = *) }`,
        metricTransformation: {
          namespace: 'Hatchery/dev',
          name: filter.name,
          value: `$.${filter.name}`,
          unit: metricCatalog[filter.name as (typeof metrics)[number]].unit,
          dimensions: Object.fromEntries(['service', ...dimensions].map((dimension) => [dimension, `$.${dimension}`])),
        },
      });
      const matched = lines.filter((line) => matches(filter.pattern, line));
      expect(matched, filter.name).toHaveLength(1);
      expect(typeof matched[0]![filter.name], filter.name).toBe('number');
      expect(matched[0], filter.name).toMatchObject({ service: metricsService, endpoint: 'game' });
    }
  });

  it('alarms on each endpoint’s oldest pending delivery and on its dead letters, to the alarms’ topic, as the filters publish them', () => {
    const result = deployed('declared');
    const all = alarms(result);
    const topic = String(state(only(result, 'aws:sns/topic:Topic')).arn);
    for (const endpoint of endpointNames) {
      const dimensions = { service: metricsService, endpoint };
      expect(all.get(`WebhookOldestPending-${endpoint}`), endpoint).toMatchObject({
        namespace: 'Hatchery/dev',
        metricName: 'WebhookOldestPending',
        dimensions,
        statistic: 'Maximum',
        period: 60,
        threshold: 15 * 60,
        comparisonOperator: 'GreaterThanThreshold',
        treatMissingData: 'notBreaching',
        alarmActions: [topic],
      });
      expect(all.get(`WebhookDeadLettered-${endpoint}`), endpoint).toMatchObject({
        namespace: 'Hatchery/dev',
        metricName: 'WebhookDeadLettered',
        dimensions,
        statistic: 'Sum',
        threshold: 0,
        comparisonOperator: 'GreaterThanThreshold',
        alarmActions: [topic],
      });
      for (const metricName of ['WebhookOldestPending', 'WebhookDeadLettered']) {
        const filter = filters(result).find((each) => each.metricTransformation.name === metricName)!;
        expect(Object.keys(dimensions).sort()).toEqual(Object.keys(filter.metricTransformation.dimensions).sort());
      }
    }
    expect([...all.keys()].filter((name) => name.startsWith('Webhook')).sort()).toEqual(
      endpointNames.flatMap((endpoint) => [`WebhookDeadLettered-${endpoint}`, `WebhookOldestPending-${endpoint}`]).sort(),
    );
    expect(alarms(deployed('tuned')).get('WebhookOldestPending-game')).toMatchObject({ threshold: 30 * 60 });
  });

  it('shows a dashboard row of the webhooks by endpoint: delivered, failed attempts and dead letters, and the oldest pending delivery', () => {
    const widgets = dashboardWidgets(deployed('declared'));
    const first = widgets.findIndex((widget) => widget.properties.title.startsWith('Webhooks'));
    const row = widgets.slice(first, first + 2);
    // Twelve units wide each: a row of its own when it starts at an even place.
    expect(first % 2).toBe(0);
    const series = (widget: (typeof widgets)[number]) => widget.properties.metrics.map((metric) => metric.slice(0, 6));
    expect(series(row[0]!).sort()).toEqual(
      endpointNames
        .flatMap((endpoint) =>
          ['WebhookDeliveries', 'WebhookFailedAttempts', 'WebhookDeadLettered'].map((name) => [
            'Hatchery/dev',
            name,
            'service',
            metricsService,
            'endpoint',
            endpoint,
          ]),
        )
        .sort(),
    );
    expect(row[0]!.properties.stat).toBe('Sum');
    expect(series(row[1]!).sort()).toEqual(
      endpointNames.map((endpoint) => ['Hatchery/dev', 'WebhookOldestPending', 'service', metricsService, 'endpoint', endpoint]).sort(),
    );
    expect(row[1]!.properties.stat).toBe('Maximum');
  });

  it('lets the listener out to any address on HTTPS, through the NAT gateways of its private subnets', () => {
    const result = deployed('declared');
    const { networkConfiguration: network } = inputs<{ networkConfiguration: { securityGroups: string[]; subnets: string[]; assignPublicIp: boolean } }>(
      only(result, 'aws:ecs/service:Service'),
    );
    const groups = result.resources.filter(
      (resource) => /^aws:ec2\/(default)?[sS]ecurityGroup:/.test(resource.type) && network.securityGroups.includes(resource.id!),
    );
    expect(groups).toHaveLength(network.securityGroups.length);
    const egress = groups.flatMap((group) => inputs<{ egress: { protocol: string; fromPort: number; toPort: number; cidrBlocks?: string[] }[] }>(group).egress);
    const allowsHttps = (rule: (typeof egress)[number]) =>
      (rule.protocol === '-1' || ((rule.protocol === 'tcp' || rule.protocol === '6') && rule.fromPort <= 443 && rule.toPort >= 443)) &&
      (rule.cidrBlocks ?? []).includes('0.0.0.0/0');
    expect(egress.some(allowsHttps)).toBe(true);
    const routeTables = new Map(
      ofType(result, 'aws:ec2/routeTable:RouteTable').map((table) => [table.id!, inputs<{ routes: Record<string, string>[] }>(table)]),
    );
    const natGateways = new Set(ofType(result, 'aws:ec2/natGateway:NatGateway').map((gateway) => gateway.id!));
    expect(network.assignPublicIp).toBe(false);
    for (const subnet of network.subnets) {
      const association = ofType(result, 'aws:ec2/routeTableAssociation:RouteTableAssociation').find((each) => inputs(each).subnetId === subnet)!;
      const table = routeTables.get(String(inputs(association).routeTableId))!;
      const route = table.routes.find((each) => each.cidrBlock === '0.0.0.0/0');
      expect(natGateways.has(String(route?.natGatewayId)), subnet).toBe(true);
    }
  });
});

describe('a stage that declares no endpoint', () => {
  it('has no webhook secret, link, endpoint, metric filter, alarm or dashboard widget; the event log’s retention is the default', () => {
    const result = deployed('none');
    expect(webhookSecrets(result)).toEqual([]);
    const env = listenerEnvironment(result);
    expect(Object.keys(env).filter((key) => /WEBHOOK/i.test(key))).toEqual(['WEBHOOK_DEPLOYED']);
    expect(env.EVENT_RETENTION_DAYS).toBe('30');
    expect(filters(result).length).toBeGreaterThan(0);
    expect(filters(result).filter((filter) => filter.name.startsWith('Webhook'))).toEqual([]);
    expect([...alarms(result).keys()].filter((name) => name.startsWith('Webhook'))).toEqual([]);
    expect(dashboardWidgets(result).filter((widget) => /webhook/i.test(widget.properties.title))).toEqual([]);
    expect(listenerReads(result)).toEqual({ endpoints: [], deployed: true, retryWindowMs: 24 * 3_600_000 });
  });
});

describe('a declaration a deployed stage refuses', () => {
  it.each(Object.entries({ http: unsafeAddresses.http, resolvesPrivate }))(
    'stops the deploy at %s, naming the endpoint and why, before it creates anything',
    (name, { reason }) => {
      const { error, resources } = deploys[name]!;
      expect(error).toMatch(/^Invalid deploy settings: HATCHERY_WEBHOOKS/);
      expect(error).toMatch(new RegExp(`endpoint "game": ${reason.source}`));
      expect(resources.filter((resource) => resource.type.startsWith('aws:'))).toEqual([]);
    },
  );

  it('stops at an endpoint whose current secret is not set, naming it and how to set it', () => {
    expect(deploys.missingSecret!.error).toMatch(/Set a value for WebhookGameSecret with `sst secret set WebhookGameSecret <value>`/);
  });
});

describe('docs/deploying.md’s example', () => {
  it('declares the endpoints deployed above, and sets each one’s current secret by the name the deploy gives it', () => {
    expect(declared.length).toBeGreaterThan(1);
    const set = [...example.matchAll(/^npx sst secret set (\w+) /gm)].map((match) => match[1]);
    expect(set).toEqual(endpointNames.map((endpoint) => webhookSecretNames(endpoint).current));
  });
});
