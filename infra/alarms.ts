import type { DeploySettings } from './settings';

/** What the alarms watch: the service's own metrics (its EMF namespace), its Lambda functions and, when the stage made one, its RDS Proxy. */
export interface ObservedFunction {
  /** What the alarm is named after (letters and digits of it). */
  name: string;
  functionName: $util.Input<string>;
}

export interface Observed {
  namespace: string;
  functions: ObservedFunction[];
  proxyName?: $util.Input<string>;
}

/** The EMF `service` dimension every document carries (packages/core/src/metrics.ts). */
const service = { service: 'hatchery' };
const minute = 60;

/**
 * The alarms of README "Operating Hatchery", one SNS topic they all notify
 * (with an optional email subscriber), and a dashboard of the same figures.
 * Thresholds are deploy settings.
 */
export function createAlarms(observed: Observed, settings: DeploySettings): { topic: aws.sns.Topic; alarms: aws.cloudwatch.MetricAlarm[] } {
  const { alarms: thresholds } = settings;
  const topic = new aws.sns.Topic('Alarms');
  if (thresholds.email) new aws.sns.TopicSubscription('AlarmsEmail', { topic: topic.arn, protocol: 'email', endpoint: thresholds.email });
  const notify = { alarmActions: [topic.arn], okActions: [topic.arn] };
  const own = (metricName: string) => ({ namespace: observed.namespace, metricName, dimensions: service, period: minute });
  const alarms = [
    new aws.cloudwatch.MetricAlarm('Http5xxRate', {
      ...notify,
      ...own('Responses5xx'),
      alarmDescription: 'More than the threshold share of HTTP answers are 5xx (README: Operating Hatchery).',
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
      alarmDescription: 'p99 HTTP latency above the threshold (README: Operating Hatchery).',
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
      alarmDescription: 'No listener has completed a read: realtime events have stopped (README: Operating Hatchery).',
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
      alarmDescription: 'Events reach clients late: NOTIFY to the last post above the threshold (README: Operating Hatchery).',
      statistic: 'Maximum',
      threshold: thresholds.listenerLagMs,
      comparisonOperator: 'GreaterThanThreshold',
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      treatMissingData: 'notBreaching',
    }),
    ...observed.functions.flatMap(({ name, functionName }) =>
      (['Errors', 'Throttles'] as const).map(
        (metricName) =>
          new aws.cloudwatch.MetricAlarm(`Lambda${metricName}${name.replace(/[^A-Za-z0-9]+/g, '')}`, {
            ...notify,
            alarmDescription: `Lambda ${metricName.toLowerCase()} of ${name} (README: Operating Hatchery).`,
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
    const proxy = (id: string, metricName: string) => ({ id, metric: { namespace: 'AWS/RDS', metricName, dimensions: { ProxyName: observed.proxyName! }, period: minute, stat: 'Maximum' } });
    alarms.push(
      new aws.cloudwatch.MetricAlarm('DatabaseConnections', {
        ...notify,
        alarmDescription: 'RDS Proxy near its connection limit (README: Operating Hatchery).',
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
  createDashboard(observed);
  return { topic, alarms };
}

function createDashboard(observed: Observed): aws.cloudwatch.Dashboard {
  const own = (...names: string[]) => names.map((name) => [observed.namespace, name, 'service', 'hatchery']);
  const widget = (title: string, metrics: unknown[], stat = 'Sum') => ({ type: 'metric', width: 12, height: 6, properties: { title, metrics, stat, period: minute } });
  const body = $resolve([aws.getRegionOutput().region, ...observed.functions.map((fn) => fn.functionName), observed.proxyName ?? '']).apply(([region, ...rest]) => {
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
      widget('Lambda errors and throttles', names.flatMap((name) => [['AWS/Lambda', 'Errors', 'FunctionName', name], ['AWS/Lambda', 'Throttles', 'FunctionName', name]])),
      widget('Lambda duration p99 (ms)', names.map((name) => ['AWS/Lambda', 'Duration', 'FunctionName', name]), 'p99'),
      ...(proxyName ? [widget('RDS Proxy connections', [['AWS/RDS', 'DatabaseConnections', 'ProxyName', proxyName], ['AWS/RDS', 'MaxDatabaseConnectionsAllowed', 'ProxyName', proxyName]], 'Maximum')] : []),
    ].map((each) => ({ ...each, properties: { ...each.properties, region } }));
    return JSON.stringify({ widgets });
  });
  return new aws.cloudwatch.Dashboard('Dashboard', { dashboardName: `${$app.name}-${$app.stage}`, dashboardBody: body });
}
