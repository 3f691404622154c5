import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import type { ObservedFunction } from './alarms';
import { lambda, sizing, type FunctionContext } from './functions';
import { stageThrottling, type DeploySettings } from './settings';

/** API Gateway's route key for a route of the table. */
const routeKey = (route: HttpRoute): string => `${route.method} ${route.path}`;

/**
 * The HTTP API (payload format 2.0): every route of the route table, each its
 * own function. The gateway neither authorizes nor answers CORS: the handlers'
 * Middy chain does both, so a missing token is the same problem+json 401 with
 * `WWW-Authenticate: Bearer` as locally, and an unlisted origin gets no CORS
 * headers at all. With any CORS configuration API Gateway answers preflights
 * itself and drops the handlers' CORS headers, and SST's `cors: false` still
 * writes an empty one, so the API's args lose it.
 */
export function createHttpApi(context: FunctionContext, settings: DeploySettings): { api: sst.aws.ApiGatewayV2; functions: ObservedFunction[] } {
  const api = new sst.aws.ApiGatewayV2('Api', {
    cors: false,
    accessLog: { retention: '1 month' },
    transform: {
      api: (args) => {
        delete args.corsConfiguration;
      },
      stage: (args) => {
        args.defaultRouteSettings = { ...stageThrottling(settings) };
      },
    },
  });
  const functions: ObservedFunction[] = [];
  for (const route of Object.values<HttpRoute>(httpRoutes)) {
    const copyFiles = route.copyFiles?.map((file) => ({ ...file }));
    const added = api.route(routeKey(route), lambda(route.handler, context, sizing.http, `${routeKey(route)}: ${route.summary}`, { copyFiles }), {
      auth: false,
    });
    functions.push({ name: routeKey(route), functionName: added.nodes.function.name });
  }
  return { api, functions };
}
