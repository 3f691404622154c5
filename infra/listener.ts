import type { DatabaseUrl } from './database';
import { manageConnections } from './hub';
import type { DeploySettings } from './settings';

/** Where the listener's image is built from: the repository root, so the image can hold the workspace packages it imports. */
export const listenerImage = { context: '.', dockerfile: 'packages/listener/Dockerfile' } as const;

/**
 * The listener: one Fargate task (two with the warm standby) that LISTENs on
 * the database and fans events out through the hub's management API. It
 * links the database URL and the table (SST grants the table's access with
 * the link) and may manage the hub's connections. Built for x86_64, the
 * platform most deploy machines and CI runners build images on natively.
 */
export function createListener(
  vpc: sst.aws.Vpc,
  databaseUrl: DatabaseUrl,
  table: sst.aws.Dynamo,
  hub: sst.aws.ApiGatewayWebSocket,
  settings: DeploySettings,
): sst.aws.Service {
  const cluster = new sst.aws.Cluster('Cluster', { vpc });
  return new sst.aws.Service('Listener', {
    cluster,
    image: listenerImage,
    architecture: 'x86_64',
    // The fan-out is CPU-bound in the SDK (~0.26 ms per PostToConnection measured locally):
    // 10,000 connections need a whole vCPU to stay near the 2 s goal.
    cpu: '1 vCPU',
    memory: '2 GB',
    scaling: { min: settings.listenerTasks, max: settings.listenerTasks },
    link: [databaseUrl, table],
    permissions: [manageConnections(hub)],
    environment: {
      WEBSOCKET_MANAGEMENT_ENDPOINT: hub.managementEndpoint,
      AWS_REGION: aws.getRegionOutput().name,
    },
  });
}
