import { wsRoutes, type WsRoute } from '@hatchery/functions/routes/realtime';
import type { ObservedFunction } from './alarms';
import { lambda, sizing, type FunctionContext } from './functions';
import { stageThrottling, type DeploySettings } from './settings';

/** What posting to (and closing) the hub's connections through the management API takes. */
export function manageConnections(hub: sst.aws.ApiGatewayWebSocket): sst.aws.FunctionPermissionArgs {
  return { actions: ['execute-api:ManageConnections'], resources: [$interpolate`${hub.nodes.api.executionArn}/*/*/@connections/*`] };
}

/**
 * The realtime hub: a WebSocket API whose $connect, $disconnect and $default
 * functions keep connections and address groups in the table. A route that
 * answers in place ($default: pings and completions) has a route response,
 * so the body its function returns goes back to the caller; what it still
 * posts (the handshake's answer, a split answer, a close), and the listener's
 * events, go through the management API, so every hub function gets the
 * API's management endpoint and the permission to use it.
 */
export function createHub(context: FunctionContext, settings: DeploySettings): { hub: sst.aws.ApiGatewayWebSocket; functions: ObservedFunction[] } {
  const hub = new sst.aws.ApiGatewayWebSocket('Hub', {
    accessLog: { retention: '1 month' },
    transform: {
      stage: (args) => {
        args.defaultRouteSettings = { ...stageThrottling(settings) };
      },
    },
  });
  const functions: ObservedFunction[] = [];
  for (const route of wsRoutes) {
    const inPlace = (route as WsRoute).answersInPlace === true;
    const added = hub.route(
      route.routeKey,
      lambda(route.handler, context, sizing.hub, `Realtime hub ${route.routeKey}`, {
        environment: { WEBSOCKET_MANAGEMENT_ENDPOINT: hub.managementEndpoint },
        permissions: [manageConnections(hub)],
      }),
      inPlace ? { transform: { route: (args) => void (args.routeResponseSelectionExpression = '$default') } } : {},
    );
    if (inPlace) {
      new aws.apigatewayv2.RouteResponse(`HubRouteResponse${route.routeKey.replace('$', '')}`, {
        apiId: hub.nodes.api.id,
        routeId: added.nodes.route.id,
        routeResponseKey: '$default',
      });
    }
    functions.push({ name: `Hub ${route.routeKey}`, functionName: added.nodes.function.name });
  }
  return { hub, functions };
}
