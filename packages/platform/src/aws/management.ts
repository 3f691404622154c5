import { AwsClient, type AwsClientOptions } from './client';
import { escapeUri } from './signature';
import { config } from '../config';
import { traced } from '../telemetry/tracing';

/**
 * Sending to hub connections through API Gateway's management API
 * (`/@connections/{id}`): the $default handler answers its caller this way and
 * the listener fans events out. Locally the endpoint is the local gateway.
 */
export interface HubConnections {
  /** 'gone' when API Gateway no longer knows the connection. */
  post(connectionId: string, data: string | Uint8Array): Promise<'sent' | 'gone'>;
  close(connectionId: string): Promise<void>;
}

/**
 * The management API of one WebSocket API stage: `POST /@connections/{id}`
 * sends, `DELETE` closes. Each call is traced as the SDK's client capture traced it.
 */
export class ManagementClient {
  private readonly client: AwsClient;

  constructor(endpoint: string, options: Pick<AwsClientOptions, 'maxSockets' | 'credentials'> & { region?: string } = {}) {
    this.client = new AwsClient({ ...options, service: 'execute-api', region: options.region ?? config().AWS_REGION, endpoint });
  }

  postToConnection(connectionId: string, data: Uint8Array): Promise<void> {
    return this.call('PostToConnection', { method: 'POST', connectionId, body: data });
  }

  deleteConnection(connectionId: string): Promise<void> {
    return this.call('DeleteConnection', { method: 'DELETE', connectionId });
  }

  destroy(): void {
    this.client.destroy();
  }

  private call(operation: string, { method, connectionId, body }: { method: 'POST' | 'DELETE'; connectionId: string; body?: Uint8Array }): Promise<void> {
    // The ids API Gateway assigns end in '=': escaped as the SDK escapes a path parameter.
    const path = `/@connections/${escapeUri(connectionId)}`;
    return traced(
      'ApiGatewayManagementApi',
      async () => {
        await this.client.send({ method, path, ...(body && { headers: { 'content-type': 'application/octet-stream' }, body }) });
      },
      { namespace: 'aws', aws: { operation, region: this.client.region } },
    );
  }
}

const clients = new Map<string, ManagementClient>();

/**
 * One client per endpoint, lane and process, keeping its sockets alive
 * between calls. A lane is a socket pool of its own, so posts in one (a
 * buyer's forgeFulfilled) never queue for sockets behind another's (a broadcast).
 */
export function managementClient(endpoint: string, maxSockets = 64, lane = 'default'): ManagementClient {
  const key = `${endpoint} ${maxSockets} ${lane}`;
  let client = clients.get(key);
  if (!client) {
    client = new ManagementClient(endpoint, { maxSockets });
    clients.set(key, client);
  }
  return client;
}

/** The management endpoint of the API a WebSocket event came through, unless configuration names one. */
export function managementEndpoint(requestContext: { domainName: string; stage: string }): string {
  return config().WEBSOCKET_MANAGEMENT_ENDPOINT ?? `https://${requestContext.domainName}/${requestContext.stage}`;
}

/** API Gateway no longer knows the connection (410). */
export const isGone = (error: unknown) => (error as { name?: string } | undefined)?.name === 'GoneException';

export function hubConnections(client: ManagementClient): HubConnections {
  const encoder = new TextEncoder();
  return {
    async post(connectionId, data) {
      try {
        await client.postToConnection(connectionId, typeof data === 'string' ? encoder.encode(data) : data);
        return 'sent';
      } catch (error) {
        if (isGone(error)) return 'gone';
        throw error;
      }
    },
    async close(connectionId) {
      try {
        await client.deleteConnection(connectionId);
      } catch (error) {
        if (!isGone(error)) throw error;
      }
    },
  };
}
