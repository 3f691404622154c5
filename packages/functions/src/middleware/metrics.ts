import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { addMetric, metrics, takeDatabaseUse } from '@hatchery/platform/telemetry/metrics';
import { requestState } from './request-state';

interface WithStatus {
  statusCode?: number;
}

/**
 * Powertools' logMetrics: the cold-start metric on an on-demand instance's
 * first call, and the invocation's metrics published when it ends, whether it
 * answered or threw.
 */
export const publishMetrics = () => logMetrics(metrics(), { captureColdStartMetric: true });

type ResponseMark = 'Responses4xx' | 'Responses5xx' | 'Responses503';

const answered = Object.freeze({ Responses5xx: 0 });
const refused = Object.freeze({ Responses4xx: 1, Responses5xx: 0 });
const failed = Object.freeze({ Responses5xx: 1 });
const unavailable = Object.freeze({ Responses5xx: 1, Responses503: 1 });

/**
 * The figures of one HTTP answer: `Responses5xx` 1 or 0, since the 5xx-rate alarm averages it over
 * requests; the 4xx and 503 marks only when the answer is one, as their rates are their sums over `Requests`.
 */
export function responseFigures(statusCode: number): Readonly<Partial<Record<ResponseMark, number>>> {
  if (statusCode < 400) return answered;
  if (statusCode < 500) return refused;
  return statusCode === 503 ? unavailable : failed;
}

/**
 * Requests, latency, status class, database time and retries of an HTTP
 * route, under the dimension sets [service, route] and [service] (the
 * alarms watch the latter). `route` is the route table's key, so it is
 * bounded. A figure that is almost always zero (database time of a request
 * that read nothing, retries, the rarer status marks) is left out when it
 * is: a document of seven values costs every request more than one of four,
 * and the sums, which is what the dashboard and docs/operating.md read, are the same.
 */
export function requestMetrics<TEvent, TResult extends WithStatus, TContext extends Context>(
  route: string,
): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  const started = requestState<number>('request metrics start');
  const byRoute = { route };
  const serviceOnly = {};
  const finish = (request: middy.Request<TEvent, TResult, Error, TContext>) => {
    const database = takeDatabaseUse();
    const target = metrics();
    target.addDimensions(byRoute);
    target.addDimensions(serviceOnly);
    addMetric('Requests', 1);
    addMetric('Latency', performance.now() - (started.get(request) ?? performance.now()));
    const status = responseFigures(request.response?.statusCode ?? 500);
    for (const name in status) addMetric(name as ResponseMark, status[name as ResponseMark]!);
    if (database.ms > 0) addMetric('DatabaseTime', database.ms);
    if (database.retries > 0) addMetric('DatabaseRetries', database.retries);
  };
  return {
    before: (request) => {
      takeDatabaseUse();
      started.set(request, performance.now());
    },
    after: finish,
    onError: finish,
  };
}

/** One count per WebSocket event of the hub, by its route. */
export function hubMetrics<
  TEvent extends { requestContext: { routeKey: string } },
  TResult extends WithStatus,
  TContext extends Context,
>(): middy.MiddlewareObj<TEvent, TResult, Error, TContext> {
  const count = (request: middy.Request<TEvent, TResult, Error, TContext>) => {
    const ok = (request.response?.statusCode ?? 500) < 400;
    const metric =
      ({ $connect: ok ? 'HubConnects' : 'HubConnectsRefused', $disconnect: 'HubDisconnects' } as const)[request.event.requestContext.routeKey as '$connect'] ??
      'HubMessages';
    addMetric(metric);
  };
  return { after: count, onError: count };
}
