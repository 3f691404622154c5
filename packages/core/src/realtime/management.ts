import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { config } from '../config';

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

const clients = new Map<string, ApiGatewayManagementApiClient>();

/**
 * Middleware a fan-out does not need, removed because the listener sends the
 * same command thousands of times per event (together about 15% of a
 * fan-out's CPU): the user agent and recursion-detection headers, and the
 * logging of each call (to the client's logger, which is a no-op anyway).
 * Serialization, the host header, content length, retries and SigV4 signing stay.
 */
const unneededMiddleware = ['getUserAgentMiddleware', 'recursionDetectionMiddleware', 'loggerMiddleware'];

type Stack = ApiGatewayManagementApiClient['middlewareStack'];

/** What the SDK's endpoint middleware registers as, so that the replacement below takes its place. */
const endpointMiddlewareOptions: Parameters<Stack['addRelativeTo']>[1] & { step: 'serialize' } = {
  step: 'serialize',
  tags: ['ENDPOINT_PARAMETERS', 'ENDPOINT_V2', 'ENDPOINT'],
  name: 'endpointV2Middleware',
  override: true,
  relation: 'before',
  toMiddleware: 'serializerMiddleware',
};


/**
 * PostToConnection with the endpoint resolved once per client instead of per
 * call. The management API's endpoint rules return the configured `endpoint`
 * as it is (no auth-scheme properties), so the result never changes; running
 * the rules and copying the client's configuration for each of 10,000 posts
 * cost about 10% of a fan-out.
 */
class FixedEndpointPostToConnection extends PostToConnectionCommand {
  override resolveMiddleware(...[stack, configuration, options]: Parameters<PostToConnectionCommand['resolveMiddleware']>) {
    let endpoint: Promise<{ url: URL }> | undefined;
    const fixed = () =>
      (endpoint ??= configuration.endpoint!().then((v1) => ({
        url: new URL(`${v1.protocol}//${v1.hostname}${v1.port ? `:${v1.port}` : ''}${v1.path}`),
      })));
    const withFixedEndpoint: Stack = {
      ...stack,
      // The command adds the SDK's endpoint middleware to its own stack; the replacement goes in once both are joined.
      concat: (from) => {
        const joined = stack.concat(from);
        const middleware = (next: (args: unknown) => Promise<unknown>, context: { endpointV2?: unknown }) => async (args: unknown) => {
          context.endpointV2 = await fixed();
          return next(args);
        };
        joined.addRelativeTo(middleware as never, endpointMiddlewareOptions);
        return joined as never;
      },
    };
    return super.resolveMiddleware(withFixedEndpoint, configuration, options);
  }
}

/** One client per endpoint, socket pool size and process, keeping its sockets alive between calls. */
export function managementClient(endpoint: string, maxSockets = 64): ApiGatewayManagementApiClient {
  const key = `${endpoint} ${maxSockets}`;
  let client = clients.get(key);
  if (!client) {
    client = new ApiGatewayManagementApiClient({
      endpoint,
      region: config().AWS_REGION,
      maxAttempts: 3,
      // The same command is sent thousands of times per event: resolving its middleware once saves about 15% of a fan-out.
      cacheMiddleware: true,
      requestHandler: { httpAgent: { keepAlive: true, maxSockets }, httpsAgent: { keepAlive: true, maxSockets } },
    });
    for (const name of unneededMiddleware) client.middlewareStack.remove(name);
    // The SDK makes a new SigV4 signer for each request, which also discards the signer's cached signing key (four HMACs per
    // request). This client always signs the same way (the endpoint names no auth scheme), so one signer serves every call;
    // it reads the credentials from the client's provider on each signature, so refreshed credentials are still used.
    const signer = client.config.signer;
    let sharedSigner: ReturnType<typeof signer> | undefined;
    client.config.signer = (authScheme) => (authScheme ? signer(authScheme) : (sharedSigner ??= signer(authScheme)));
    clients.set(key, client);
  }
  return client;
}

/** The management endpoint of the API a WebSocket event came through, unless configuration names one. */
export function managementEndpoint(requestContext: { domainName: string; stage: string }): string {
  return config().WEBSOCKET_MANAGEMENT_ENDPOINT ?? `https://${requestContext.domainName}/${requestContext.stage}`;
}

export const isGone = (error: unknown) => error instanceof GoneException || (error as { name?: string } | undefined)?.name === 'GoneException';

const configuredEndpoint = (client: ApiGatewayManagementApiClient) => client.config.isCustomEndpoint && client.config.endpoint !== undefined;

export function hubConnections(client: ApiGatewayManagementApiClient): HubConnections {
  const encoder = new TextEncoder();
  return {
    async post(connectionId, data) {
      try {
        await client.send(new (configuredEndpoint(client) ? FixedEndpointPostToConnection : PostToConnectionCommand)({ ConnectionId: connectionId, Data: typeof data === 'string' ? encoder.encode(data) : data }));
        return 'sent';
      } catch (error) {
        if (isGone(error)) return 'gone';
        throw error;
      }
    },
    async close(connectionId) {
      try {
        await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
      } catch (error) {
        if (!isGone(error)) throw error;
      }
    },
  };
}
