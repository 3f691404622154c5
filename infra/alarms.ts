import { listenerDocuments, metricCatalog, metricsService } from '@hatchery/platform/telemetry/metrics';
import { hubEvents } from '@hatchery/core/realtime/events';
import type { DeploySettings } from './settings';

/** What the alarms watch: the service's own metrics (its EMF namespace), its Lambda functions and, when the stage made one, its RDS Proxy. */
export interface ObservedFunction {
  /** What the alarm is named after (letters and digits of it). */
  name: string;
  functionName: $util.Input<string>;
}

interface Observed {
  namespace: string;
  functions: ObservedFunction[];
  proxyName?: $util.Input<string>;
  /** The listener's log group, whose EMF lines its metric filters publish; none under `sst dev`. */
  listenerLogGroup?: $util.Input<string>;
}

/** The EMF `service` dimension every document carries (packages/platform/src/telemetry/metrics.ts). */
const service = { service: metricsService };
const minute = 60;
const eventKinds = Object.values(hubEvents);

/**
 * The listener's metrics in CloudWatch. Fargate's awslogs driver stores EMF
 * lines as plain log events (only Lambda and the CloudWatch agent extract
 * them), so one metric filter per metric of the given listenerDocuments
 * publishes it from the line: its value and unit, the namespace, and the document's
 * dimensions read from the line's own fields, as EMF would.
 */
function createListenerMetricFilters(
  namespace: string,
  logGroupName: $util.Input<string>,
  documents: readonly (typeof listenerDocuments)[keyof typeof listenerDocuments][],
): aws.cloudwatch.LogMetricFilter[] {
  return documents.flatMap(({ dimensions, metrics }) =>
    metrics.map(
      (name) =>
        new aws.cloudwatch.LogMetricFilter(`ListenerMetric${name}`, {
          name,
          logGroupName,
          pattern: `{ ($.service = "${metricsService}") && ($.${name} = *) }`,
          metricTransformation: {
            namespace,
            name,
            value: `$.${name}`,
            unit: metricCatalog[name].unit,
            dimensions: Object.fromEntries(['service', ...dimensions].map((dimension) => [dimension, `$.${dimension}`])),
          },
        }),
    ),
  );
}

/**
 * The alarms of docs/operating.md, one SNS topic they all notify
 * (with an optional email subscriber), and a dashboard of the same figures.
 * Thresholds are deploy settings.
 */
export function createAlarms(observed: Observed, settings: DeploySettings): { topic: aws.sns.Topic; alarms: aws.cloudwatch.MetricAlarm[] } {
  const { alarms: thresholds } = settings;
  const endpoints = settings.webhooks.endpoints.map(({ name }) => name);
  // The webhooks' metrics exist only on a stage that declares endpoints.
  const { webhook, ...alwaysPublished } = listenerDocuments;
  const documents = [...Object.values(alwaysPublished), ...(endpoints.length > 0 ? [webhook] : [])];
  if (observed.listenerLogGroup) createListenerMetricFilters(observed.namespace, observed.listenerLogGroup, documents);
  const topic = new aws.sns.Topic('Alarms');
  if (thresholds.email) new aws.sns.TopicSubscription('AlarmsEmail', { topic: topic.arn, protocol: 'email', endpoint: thresholds.email });
  const notify = { alarmActions: [topic.arn], okActions: [topic.arn] };
  const own = (metricName: string) => ({ namespace: observed.namespace, metricName, dimensions: service, period: minute });
  const alarms = [
    new aws.cloudwatch.MetricAlarm('Http5xxRate', {
      ...notify,
      ...own('Responses5xx'),
      alarmDescription: 'More than the threshold share of HTTP answers are 5xx (docs/operating.md: Alarms).',
      statistic: 'Average',
      threshold: thresholds.http5xxRate,
      comparisonOperator: 'GreaterThanThreshold',
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      treatMissingData: 'notBreaching',
    }),
    new aws.cloudwatch.MetricAlarm('HttpLatencyP99', {
      ...notify,
      ...own('Latency'),
      alarmDescription: 'p99 HTTP latency above the threshold (docs/operating.md: Alarms).',
      extendedStatistic: 'p99',
      threshold: thresholds.p99LatencyMs,
      comparisonOperator: 'GreaterThanThreshold',
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      treatMissingData: 'notBreaching',
    }),
    new aws.cloudwatch.MetricAlarm('ListenerHeartbeatMissing', {
      ...notify,
      ...own('ListenerHeartbeat'),
      alarmDescription: 'No listener has completed a read: realtime events have stopped (docs/operating.md: Alarms).',
      statistic: 'Sum',
      threshold: 1,
      comparisonOperator: 'LessThanThreshold',
      evaluationPeriods: thresholds.heartbeatMinutes,
      datapointsToAlarm: thresholds.heartbeatMinutes,
      treatMissingData: 'breaching',
    }),
    new aws.cloudwatch.MetricAlarm('ListenerLag', {
      ...notify,
      ...own('ListenerLag'),
      alarmDescription: 'Events reach clients late: NOTIFY to the last post above the threshold (docs/operating.md: Alarms).',
      statistic: 'Maximum',
      threshold: thresholds.listenerLagMs,
      comparisonOperator: 'GreaterThanThreshold',
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      treatMissingData: 'notBreaching',
    }),
    ...eventKinds.map(
      (kind) =>
        new aws.cloudwatch.MetricAlarm(`UndeliveredPosts${kind[0]!.toUpperCase()}${kind.slice(1)}`, {
          ...notify,
          ...own('UndeliveredPosts'),
          dimensions: { ...service, kind },
          alarmDescription: `Connections missed ${kind} events: posts failed or not made before their deadline (docs/operating.md: Alarms).`,
          statistic: 'Sum',
          threshold: thresholds.undeliveredPosts,
          comparisonOperator: 'GreaterThanThreshold',
          evaluationPeriods: 5,
          datapointsToAlarm: 2,
          treatMissingData: 'notBreaching',
        }),
    ),
    new aws.cloudwatch.MetricAlarm('IndexerLag', {
      ...notify,
      ...own('IndexerLag'),
      alarmDescription: 'The indexer is behind its chain: the data every list serves is older than the threshold (docs/ponder.md).',
      statistic: 'Maximum',
      threshold: thresholds.indexerLagSeconds,
      comparisonOperator: 'GreaterThanThreshold',
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      // Unknown without Ponder's checkpoint (another indexer, demo data): nothing to alarm on. A stopped listener has its own alarm.
      treatMissingData: 'notBreaching',
    }),
    ...endpoints.flatMap((endpoint) => [
      new aws.cloudwatch.MetricAlarm(`WebhookOldestPending-${endpoint}`, {
        ...notify,
        ...own('WebhookOldestPending'),
        dimensions: { ...service, endpoint },
        alarmDescription: `Deliveries to the webhook endpoint ${endpoint} have waited longer than the threshold: it is down or slow (docs/operating.md: Alarms).`,
        statistic: 'Maximum',
        threshold: thresholds.webhookPendingMinutes * minute,
        comparisonOperator: 'GreaterThanThreshold',
        // The age only grows while the endpoint is stuck, so one period over the threshold is enough.
        evaluationPeriods: 1,
        // The leading listener publishes it every minute; a stopped listener has its own alarm.
        treatMissingData: 'notBreaching',
      }),
      new aws.cloudwatch.MetricAlarm(`WebhookDeadLettered-${endpoint}`, {
        ...notify,
        ...own('WebhookDeadLettered'),
        dimensions: { ...service, endpoint },
        alarmDescription: `Deliveries to the webhook endpoint ${endpoint} were given up after the retry window: its receiver missed them (docs/operating.md: Alarms).`,
        statistic: 'Sum',
        threshold: 0,
        comparisonOperator: 'GreaterThanThreshold',
        evaluationPeriods: 1,
        treatMissingData: 'notBreaching',
      }),
    ]),
    ...observed.functions.flatMap(({ name, functionName }) =>
      (['Errors', 'Throttles'] as const).map(
        (metricName) =>
          new aws.cloudwatch.MetricAlarm(`Lambda${metricName}${name.replace(/[^A-Za-z0-9]+/g, '')}`, {
            ...notify,
            alarmDescription: `Lambda ${metricName.toLowerCase()} of ${name} (docs/operating.md: Alarms).`,
            namespace: 'AWS/Lambda',
            metricName,
            dimensions: { FunctionName: functionName },
            statistic: 'Sum',
            period: 5 * minute,
            threshold: metricName === 'Errors' ? thresholds.lambdaErrors : thresholds.lambdaThrottles,
            comparisonOperator: 'GreaterThanThreshold',
            evaluationPeriods: 1,
            treatMissingData: 'notBreaching',
          }),
      ),
    ),
  ];
  if (observed.proxyName) {
    // RDS Proxy publishes both metrics with the dimension set ProxyName alone (as well as per target group and target), so their ratio is the proxy's.
    const proxy = (id: string, metricName: string) => ({
      id,
      metric: { namespace: 'AWS/RDS', metricName, dimensions: { ProxyName: observed.proxyName! }, period: minute, stat: 'Maximum' },
    });
    alarms.push(
      new aws.cloudwatch.MetricAlarm('DatabaseConnections', {
        ...notify,
        alarmDescription: 'RDS Proxy near its connection limit (docs/operating.md: Alarms).',
        metricQueries: [
          proxy('connections', 'DatabaseConnections'),
          proxy('allowed', 'MaxDatabaseConnectionsAllowed'),
          { id: 'percent', expression: '100 * connections / allowed', label: 'Connections, % of allowed', returnData: true },
        ],
        threshold: thresholds.databaseConnectionsPercent,
        comparisonOperator: 'GreaterThanThreshold',
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: 'notBreaching',
      }),
    );
  }
  createDashboard(observed, endpoints);
  return { topic, alarms };
}

function createDashboard(observed: Observed, endpoints: readonly string[]): aws.cloudwatch.Dashboard {
  const own = (...names: string[]) => names.map((name) => [observed.namespace, name, 'service', metricsService]);
  const byKind = (...names: string[]) => eventKinds.flatMap((kind) => names.map((name) => [observed.namespace, name, 'service', metricsService, 'kind', kind]));
  const byEndpoint = (...names: string[]) =>
    endpoints.flatMap((endpoint) => names.map((name) => [observed.namespace, name, 'service', metricsService, 'endpoint', endpoint]));
  const widget = (title: string, metrics: unknown[], stat = 'Sum') => ({
    type: 'metric',
    width: 12,
    height: 6,
    properties: { title, metrics, stat, period: minute },
  });
  const body = $resolve([aws.getRegionOutput().region, ...observed.functions.map((fn) => fn.functionName), observed.proxyName ?? '']).apply(
    ([region, ...rest]) => {
      const names = rest.slice(0, observed.functions.length) as string[];
      const proxyName = rest.at(-1) as string;
      const widgets = [
        widget('Requests and status classes', own('Requests', 'Responses4xx', 'Responses5xx', 'Responses503')),
        widget('Latency p50 / p99 (ms)', [...own('Latency').map((m) => [...m, { stat: 'p50' }]), ...own('Latency').map((m) => [...m, { stat: 'p99' }])], 'p99'),
        widget('Database time and retries', own('DatabaseTime', 'DatabaseRetries')),
        widget('Accounts', own('AccountsProvisioned', 'ProvisioningConflicts', 'ChallengesIssued', 'WalletsLinked', 'RateLimited')),
        widget('Hub', own('HubConnects', 'HubConnectsRefused', 'HubDisconnects', 'HubSubscriptions')),
        widget('Listener', own('ListenerHeartbeat', 'ListenerReads', 'ListenerNotifications')),
        widget('Listener lag and read time (ms)', own('ListenerLag', 'ListenerReadTime'), 'Maximum'),
        widget('Indexer lag behind its chain (s)', own('IndexerLag'), 'Maximum'),
        widget(
          'Events, posts sent, gone and failed by kind (listener and fan-out function)',
          byKind('ListenerEvents', 'ListenerPostsSent', 'ListenerGoneConnections', 'ListenerFailedPosts', 'UndeliveredPosts'),
        ),
        widget('Fan-out time per event (ms)', byKind('ListenerFanOutTime'), 'Maximum'),
        widget('Fan-out function: shard time p99 (ms)', byKind('FanOutShardTime'), 'p99'),
        widget('Fan-out function: posts skipped at the deadline', byKind('FanOutSkippedPosts')),
        // A row of its own: the twelve widgets above fill six rows of two.
        ...(endpoints.length > 0
          ? [
              widget(
                'Webhooks: delivered, failed attempts and dead-lettered by endpoint',
                byEndpoint('WebhookDeliveries', 'WebhookFailedAttempts', 'WebhookDeadLettered'),
              ),
              widget('Webhooks: oldest pending delivery by endpoint (s)', byEndpoint('WebhookOldestPending'), 'Maximum'),
            ]
          : []),
        widget(
          'Lambda errors and throttles',
          names.flatMap((name) => [
            ['AWS/Lambda', 'Errors', 'FunctionName', name],
            ['AWS/Lambda', 'Throttles', 'FunctionName', name],
          ]),
        ),
        widget(
          'Lambda duration p99 (ms)',
          names.map((name) => ['AWS/Lambda', 'Duration', 'FunctionName', name]),
          'p99',
        ),
        ...(proxyName
          ? [
              widget(
                'RDS Proxy connections',
                [
                  ['AWS/RDS', 'DatabaseConnections', 'ProxyName', proxyName],
                  ['AWS/RDS', 'MaxDatabaseConnectionsAllowed', 'ProxyName', proxyName],
                ],
                'Maximum',
              ),
            ]
          : []),
      ].map((each) => ({ ...each, properties: { ...each.properties, region } }));
      return JSON.stringify({ widgets });
    },
  );
  return new aws.cloudwatch.Dashboard('Dashboard', { dashboardName: `${$app.name}-${$app.stage}`, dashboardBody: body });
}
