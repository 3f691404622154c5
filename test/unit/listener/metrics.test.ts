import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics, setEmfSink } from '@hatchery/platform/telemetry/metrics';
import { listenerMetrics } from '@hatchery/listener/metrics';
import { metricsRegistry, type EmfDocument } from '@hatchery/local/metrics';
import { parseEmf } from '../../support/emf';

let printed: EmfDocument[];

beforeEach(() => {
  printed = [];
  setEmfSink((document) => printed.push(parseEmf(JSON.stringify(document))!));
});
afterEach(() => setEmfSink(undefined));

describe('listener metrics', () => {
  it('measures the lag from the first notification a read answers to its end, and the fan-out of each event', () => {
    let now = 0;
    const metrics = listenerMetrics(createMetrics(), () => now);
    now = 100;
    metrics.notified();
    now = 150;
    metrics.notified();
    now = 200;
    const read = metrics.readStarted();
    // A notification during the read belongs to the next one.
    now = 205;
    metrics.notified();
    now = 260;
    metrics.delivered('forgeFulfilled', { sent: 3, gone: 1, failed: 0, skipped: 0 }, 210);
    now = 300;
    read.finished(true);

    expect(printed).toHaveLength(2);
    const [event, summary] = printed;
    expect(event!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'kind']]);
    expect(event).toMatchObject({
      service: 'hatchery',
      kind: 'forgeFulfilled',
      ListenerEvents: 1,
      ListenerFanOutTime: 50,
      ListenerPostsSent: 3,
      ListenerGoneConnections: 1,
      ListenerFailedPosts: 0,
    });
    expect(summary!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
    expect(summary).toMatchObject({ ListenerReads: 1, ListenerReadTime: 100, ListenerNotifications: 2, ListenerHeartbeat: 1, ListenerLag: 200 });

    now = 400;
    const next = metrics.readStarted();
    now = 410;
    next.finished(true);
    expect(printed[2]).toMatchObject({ ListenerReads: 1, ListenerReadTime: 10, ListenerNotifications: 1, ListenerHeartbeat: 1, ListenerLag: 205 });

    const polled = metrics.readStarted();
    now = 420;
    polled.finished(true);
    expect(printed[3]).toMatchObject({ ListenerNotifications: 0, ListenerHeartbeat: 1 });
    expect(printed[3]).not.toHaveProperty('ListenerLag');

    const failed = metrics.readStarted();
    failed.finished(false);
    expect(printed[4]).toMatchObject({ ListenerReads: 1 });
    expect(printed[4]).not.toHaveProperty('ListenerHeartbeat');

    // A notification is answered by the first read to start after it, whichever table it reads; the next read answers none.
    now = 500;
    metrics.notified();
    now = 510;
    const listings = metrics.readStarted();
    now = 530;
    listings.finished(true);
    expect(printed[5]).toMatchObject({ ListenerReads: 1, ListenerReadTime: 20, ListenerNotifications: 1, ListenerLag: 30, ListenerHeartbeat: 1 });
    const forge = metrics.readStarted();
    now = 540;
    forge.finished(true);
    expect(printed[6]).toMatchObject({ ListenerNotifications: 0 });
    expect(printed[6]).not.toHaveProperty('ListenerLag');
  });
});

describe('the local registry', () => {
  it('sums values (several in one document too) per dimension set and renders Prometheus text', () => {
    const registry = metricsRegistry();
    const document = (route: string, latency: number | number[]): EmfDocument => ({
      _aws: {
        Timestamp: 0,
        CloudWatchMetrics: [
          {
            Namespace: 'Hatchery',
            Dimensions: [['service', 'route'], ['service']],
            Metrics: [
              { Name: 'Requests', Unit: 'Count' },
              { Name: 'Latency', Unit: 'Milliseconds' },
            ],
          },
        ],
      },
      service: 'hatchery',
      route,
      Requests: 1,
      Latency: latency,
    });
    registry.add(document('GET /a', 10));
    registry.add(document('GET /a', [20, 30]));
    registry.add(document('GET /b "x"', 5));
    expect(registry.series('Requests', { service: 'hatchery', route: 'GET /a' })).toEqual({ sum: 2, count: 2 });
    expect(registry.series('Latency', { route: 'GET /a', service: 'hatchery' })).toEqual({ sum: 60, count: 3 });
    expect(registry.series('Latency', { service: 'hatchery' })).toEqual({ sum: 65, count: 4 });
    expect(registry.series('Latency', { service: 'other' })).toEqual({ sum: 0, count: 0 });
    expect(registry.render()).toBe(
      [
        '# TYPE hatchery_latency_milliseconds summary',
        'hatchery_latency_milliseconds_sum{route="GET /a",service="hatchery"} 60',
        'hatchery_latency_milliseconds_count{route="GET /a",service="hatchery"} 3',
        'hatchery_latency_milliseconds_sum{service="hatchery"} 65',
        'hatchery_latency_milliseconds_count{service="hatchery"} 4',
        'hatchery_latency_milliseconds_sum{route="GET /b \\"x\\"",service="hatchery"} 5',
        'hatchery_latency_milliseconds_count{route="GET /b \\"x\\"",service="hatchery"} 1',
        '# TYPE hatchery_requests_total counter',
        'hatchery_requests_total{route="GET /a",service="hatchery"} 2',
        'hatchery_requests_total{service="hatchery"} 3',
        'hatchery_requests_total{route="GET /b \\"x\\"",service="hatchery"} 1',
        '',
      ].join('\n'),
    );
  });
});
