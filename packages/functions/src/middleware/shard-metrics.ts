import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { addMetric, metrics, type MetricName } from '@hatchery/platform/telemetry/metrics';
import { shardJobSchema, type Delivery } from '@hatchery/core/realtime/fan-out';
import { eventOfFrame } from '@hatchery/core/realtime/events';
import { requestState } from './request-state';

/**
 * One shard invocation of the fan-out function, under the dimension set
 * [service, kind] (the event its frame carries): its posts under the
 * listener's names, so each kind's totals count every post wherever it was
 * made, its time, and the posts its deadline left unattempted. A failed
 * invocation is counted by Lambda's Errors; its retry resumes after what it claimed (see deliverShard).
 */
export function shardMetrics<TContext extends Context>(): middy.MiddlewareObj<unknown, Delivery, Error, TContext> {
  const started = requestState<number>('shard start');
  return {
    before: (request) => {
      started.set(request, performance.now());
    },
    after: (request) => {
      const delivery = request.response!;
      const kind = eventOfFrame(shardJobSchema.parse(request.event).frame);
      if (kind) metrics().addDimension('kind', kind);
      const figures: Partial<Record<MetricName, number>> = {
        ListenerPostsSent: delivery.sent,
        ListenerGoneConnections: delivery.gone,
        ListenerFailedPosts: delivery.failed,
        FanOutSkippedPosts: delivery.skipped,
        UndeliveredPosts: delivery.failed + delivery.skipped,
        FanOutShardTime: performance.now() - (started.get(request) ?? performance.now()),
      };
      for (const [name, value] of Object.entries(figures) as [MetricName, number][]) addMetric(name, value);
    },
  };
}
