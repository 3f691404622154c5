import type { DatabaseUrl } from './database';
import { metricsNamespace, serviceEnvironment } from './functions';
import { manageConnections } from './hub';
import { listenerImageArgs } from './runtime';
import type { DeploySettings } from './settings';
import type { ListenerWebhooks } from './webhooks';

/** Where the listener's image is built from: the repository root, so the image can hold the workspace packages it imports. */
const listenerImage = { context: '.', dockerfile: 'packages/listener/Dockerfile', args: listenerImageArgs } as const;

/**
 * The listener: one Fargate task (two with the warm standby) that LISTENs on
 * the database and fans events out through the hub's management API. It
 * links the database URL and the table (SST grants the table's access with
 * the link) and may manage the hub's connections. Built for x86_64, the
 * platform most deploy machines and CI runners build images on natively.
 *
 * On an `sst.aws.Vpc` SST puts services in the public subnets with a public
 * IP; the cluster is given the VPC's parts instead, with the private subnets
 * for containers, so the task has no public address and leaves through the
 * NAT gateways (the addresses a database allow-list names, and a webhook
 * receiver sees): the VPC's security group lets it out to any address.
 */
export function createListener(
  vpc: sst.aws.Vpc,
  databaseUrl: DatabaseUrl,
  table: sst.aws.Dynamo,
  hub: sst.aws.ApiGatewayWebSocket,
  fanOut: sst.aws.Function,
  settings: DeploySettings,
  webhooks: ListenerWebhooks,
): sst.aws.Service {
  const cluster = new sst.aws.Cluster('Cluster', {
    vpc: {
      id: vpc.id,
      securityGroups: vpc.securityGroups,
      containerSubnets: vpc.privateSubnets,
      loadBalancerSubnets: vpc.publicSubnets,
      cloudmapNamespaceId: vpc.nodes.cloudmapNamespace.id,
      cloudmapNamespaceName: vpc.nodes.cloudmapNamespace.name,
    },
  });
  return new sst.aws.Service('Listener', {
    cluster,
    image: listenerImage,
    architecture: 'x86_64',
    // The listener posts small audiences and forgeFulfilled itself; large broadcasts go to the fan-out function.
    // Posting is CPU-bound (~0.15 ms per PostToConnection measured locally, signing included; ~0.3 ms with the AWS SDK).
    cpu: '1 vCPU',
    memory: '2 GB',
    scaling: { min: settings.listenerTasks, max: settings.listenerTasks },
    // Linking the fan-out function names it (FANOUT_FUNCTION_NAME) and grants lambda:InvokeFunction on it.
    link: [databaseUrl, table, fanOut, ...webhooks.link],
    permissions: [manageConnections(hub)],
    environment: {
      WEBSOCKET_MANAGEMENT_ENDPOINT: hub.managementEndpoint,
      AWS_REGION: aws.getRegionOutput().region,
      METRICS_NAMESPACE: metricsNamespace(),
      FANOUT_POSTS_PER_SECOND: String(settings.fanOut.postsPerSecond),
      FANOUT_MIN_INTERVAL_MS: String(settings.fanOut.minIntervalMs),
      EVENT_RETENTION_DAYS: String(settings.eventRetentionDays),
      // Whatever it declares, a deployed stage's listener is held to a deployed stage's rules: https:// to public addresses.
      WEBHOOK_DEPLOYED: 'true',
      ...webhooks.environment,
      ...serviceEnvironment(settings),
    },
  });
}

/**
 * The log group the listener's container writes to: the awslogs driver's
 * group in its task definition, which SST creates and does not expose. Read
 * from the task definition, a filter on it comes after the group exists.
 */
export function listenerLogGroup(listener: sst.aws.Service): $util.Output<string> {
  return listener.nodes.taskDefinition.containerDefinitions.apply((json) => {
    const [container] = JSON.parse(json) as { logConfiguration: { options: Record<string, string> } }[];
    const group = container?.logConfiguration.options['awslogs-group'];
    if (!group) throw new Error('The listener’s task definition names no awslogs group.');
    return group;
  });
}
