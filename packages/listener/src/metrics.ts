import { createMetrics, type listenerDocuments, metricCatalog, publishWith, type ListenerEventKind, type Metrics } from '@hatchery/platform/telemetry/metrics';

type ReadMetric = (typeof listenerDocuments.read.metrics)[number];
type EventMetric = (typeof listenerDocuments.event.metrics)[number];
type WebhookMetric = (typeof listenerDocuments.webhook.metrics)[number];

/** The webhooks' metrics, one document each, by the dimension endpoint (a declared endpoint's name: a bounded set). */
export function webhookMetrics() {
  const publish = (endpoint: string, name: WebhookMetric, value: number) => publishWith({ name: 'endpoint', value: endpoint }, { [name]: value });
  return {
    delivered: (endpoint: string) => publish(endpoint, 'WebhookDeliveries', 1),
    failedAttempt: (endpoint: string) => publish(endpoint, 'WebhookFailedAttempts', 1),
    deadLettered: (endpoint: string) => publish(endpoint, 'WebhookDeadLettered', 1),
    oldestPending: (endpoint: string, seconds: number) => publish(endpoint, 'WebhookOldestPending', seconds),
  };
}

export type WebhookMetrics = ReturnType<typeof webhookMetrics>;

interface DeliveryFigures {
  sent: number;
  gone: number;
  failed: number;
  skipped: number;
}

/** One read's measurements, published as one EMF document when it finishes. */
export interface MeasuredRead {
  /** `ok` false for a read that failed: no heartbeat then. */
  finished(ok: boolean): void;
}

/**
 * The listener's metrics. It is a long-running process, not a Lambda, so it
 * publishes itself: one document per read, one per
 * event. Each metric appears once per document, so both EMF extraction and a
 * log metric filter read them.
 */
export function listenerMetrics(target: Metrics = createMetrics(), now: () => number = () => performance.now()) {
  let pending = 0;
  let pendingSince: number | undefined;
  const add = (name: ReadMetric, value: number) => target.addMetric(name, metricCatalog[name].unit, value);
  return {
    /** One event posted to its audience: a document of its own, with the dimension kind. */
    delivered(kind: ListenerEventKind, delivery: DeliveryFigures, startedAt: number): void {
      const figures: Record<EventMetric, number> = {
        ListenerEvents: 1,
        ListenerFanOutTime: now() - startedAt,
        ListenerPostsSent: delivery.sent,
        ListenerGoneConnections: delivery.gone,
        ListenerFailedPosts: delivery.failed,
        UndeliveredPosts: delivery.failed + delivery.skipped,
      };
      publishWith({ name: 'kind', value: kind }, figures);
    },
    /** The indexer's lag behind its chains, a document of its own. */
    indexerLag(seconds: number): void {
      const name: (typeof listenerDocuments.indexer.metrics)[number] = 'IndexerLag';
      target.addMetric(name, metricCatalog[name].unit, seconds);
      target.publishStoredMetrics();
    },
    notified(): void {
      pending++;
      pendingSince ??= now();
    },
    /**
     * A read takes over the notifications received so far: it answers them.
     * A notification asks only for the reads its tables call for, so the
     * first read to start after it, of either kind, is the one it waited on.
     */
    readStarted(): MeasuredRead {
      const started = now();
      const notifications = pending;
      const since = pendingSince;
      pending = 0;
      pendingSince = undefined;
      return {
        finished(ok) {
          const ended = now();
          add('ListenerReads', 1);
          add('ListenerReadTime', ended - started);
          add('ListenerNotifications', notifications);
          if (ok) add('ListenerHeartbeat', 1);
          if (ok && since !== undefined) add('ListenerLag', ended - since);
          target.publishStoredMetrics();
        },
      };
    },
  };
}
