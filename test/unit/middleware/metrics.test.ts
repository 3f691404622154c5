import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '@hatchery/core/errors';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import type { Delivery } from '@hatchery/core/realtime/fan-out';
import { hubMetrics, publishMetrics, requestMetrics, responseFigures } from '@hatchery/functions/middleware/metrics';
import { problemDetails } from '@hatchery/functions/middleware/problem-details';
import type { LoggedContext } from '@hatchery/functions/middleware/request-logger';
import { shardMetrics } from '@hatchery/functions/middleware/shard-metrics';
import { lambdaContext } from '@hatchery/local/gateway/lambda';
import { recordDatabaseRetry, recordDatabaseTime, setEmfSink, type EmfOutput } from '@hatchery/platform/telemetry/metrics';
import { useLogDestination } from '@hatchery/platform/telemetry/logger';

/**
 * The metrics each chain adds for an invocation, read from the EMF documents
 * Powertools publishes when it ends (the document's shape itself is
 * test/unit/telemetry/emf.test.ts's): an HTTP request's figures, a hub
 * event's count, a fan-out shard's posts.
 */
let documents: EmfOutput[];
beforeEach(() => {
  documents = [];
  setEmfSink((document) => documents.push(document));
  useLogDestination({ write: () => undefined });
});
afterEach(() => {
  setEmfSink(undefined);
  vi.useRealTimers();
});

type Figures = Record<string, unknown>;
const figuresOf = (document: EmfOutput | undefined): Figures => {
  const { _aws, ...rest } = document as EmfOutput & Figures;
  return rest;
};

describe('HTTP status classes', () => {
  it('marks each answer with 1 in exactly its class, and 503 apart; 5xx always, since its alarm averages it, the others only when they are 1', () => {
    expect(responseFigures(200)).toEqual({ Responses5xx: 0 });
    expect(responseFigures(204)).toEqual({ Responses5xx: 0 });
    expect(responseFigures(404)).toEqual({ Responses4xx: 1, Responses5xx: 0 });
    expect(responseFigures(429)).toEqual({ Responses4xx: 1, Responses5xx: 0 });
    expect(responseFigures(500)).toEqual({ Responses5xx: 1 });
    expect(responseFigures(503)).toEqual({ Responses5xx: 1, Responses503: 1 });
  });
});

describe('requestMetrics', () => {
  /** One invocation of a chain with the request's metrics around a handler that does `work` (and the problem middleware inside, as in the HTTP chain). */
  async function invoke(work: () => Promise<{ statusCode: number }>, { elapsedMs = 0, problems = true } = {}) {
    const chain = middy<unknown, { statusCode: number }, Error, LoggedContext>().use(publishMetrics()).use(requestMetrics('GET /editions'));
    if (problems) chain.use(problemDetails<unknown, { statusCode: number }, LoggedContext>(() => '/editions'));
    const handler = chain.handler(async () => {
      vi.advanceTimersByTime(elapsedMs);
      return work();
    });
    vi.useFakeTimers({ toFake: ['performance'] });
    await handler({}, lambdaContext('metrics-test') as LoggedContext).catch(() => undefined);
    vi.useRealTimers();
    expect(documents).toHaveLength(1);
    return figuresOf(documents.pop());
  }

  it('counts the request and its latency under its route, with its status class, leaving out what is zero', async () => {
    expect(await invoke(async () => ({ statusCode: 200 }), { elapsedMs: 25 })).toEqual({
      service: 'hatchery',
      route: 'GET /editions',
      Requests: 1,
      Latency: 25,
      Responses5xx: 0,
    });
    expect(await invoke(async () => ({ statusCode: 404 }))).toMatchObject({ Responses4xx: 1, Responses5xx: 0 });
  });

  it('counts a problem by the status it answered, and an invocation that ended without an answer as a 500', async () => {
    expect(
      await invoke(async () => {
        throw new AppError('unavailable', 'Later.');
      }),
    ).toMatchObject({ Requests: 1, Responses5xx: 1, Responses503: 1 });
    expect(
      await invoke(
        async () => {
          throw new Error('lost');
        },
        { problems: false },
      ),
    ).toMatchObject({ Requests: 1, Responses5xx: 1 });
  });

  it('adds the database time and retries of this request only', async () => {
    recordDatabaseTime(500);
    const figures = await invoke(async () => {
      recordDatabaseTime(12);
      recordDatabaseTime(3);
      recordDatabaseRetry();
      return { statusCode: 200 };
    });
    expect(figures).toMatchObject({ DatabaseTime: 15, DatabaseRetries: 1 });
    expect(await invoke(async () => ({ statusCode: 200 }))).not.toHaveProperty('DatabaseTime');
  });
});

describe('hubMetrics', () => {
  /** The metric one hub event adds, by its route and answer. */
  async function counted(routeKey: string, answer: () => Promise<{ statusCode: number }>) {
    type HubEvent = { requestContext: { routeKey: string } };
    const handler = middy<HubEvent, { statusCode: number }, Error, Context>()
      .use(publishMetrics())
      .use(hubMetrics<HubEvent, { statusCode: number }, Context>())
      .handler(answer);
    await handler({ requestContext: { routeKey } }, lambdaContext('hub-test')).catch(() => undefined);
    const names = Object.keys(figuresOf(documents.pop())).filter((name) => name !== 'service');
    return names;
  }

  it('counts a connect, a refused connect, a disconnect and any other message apart', async () => {
    expect(await counted('$connect', async () => ({ statusCode: 200 }))).toEqual(['HubConnects']);
    expect(await counted('$connect', async () => ({ statusCode: 403 }))).toEqual(['HubConnectsRefused']);
    expect(
      await counted('$connect', async () => {
        throw new Error('failed');
      }),
    ).toEqual(['HubConnectsRefused']);
    expect(await counted('$disconnect', async () => ({ statusCode: 200 }))).toEqual(['HubDisconnects']);
    expect(await counted('$default', async () => ({ statusCode: 200 }))).toEqual(['HubMessages']);
  });
});

describe('shardMetrics', () => {
  it("counts a shard's posts under the listener's names and the kind of event it posted, with its time", async () => {
    const frame = marketChangedMessage({ count: 1, maxBlock: '1', version: 3 });
    const delivery: Delivery = { sent: 7, gone: 2, failed: 1, skipped: 4 };
    const handler = middy<unknown, Delivery, Error, Context>()
      .use(publishMetrics())
      .use(shardMetrics())
      .handler(async () => {
        vi.advanceTimersByTime(40);
        return delivery;
      });
    vi.useFakeTimers({ toFake: ['performance'] });
    await handler({ event: 'marketChanged#3', shard: 5, frame }, lambdaContext('fan-out'));
    vi.useRealTimers();
    expect(documents).toHaveLength(1);
    expect(documents[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'kind']]);
    expect(figuresOf(documents[0])).toEqual({
      service: 'hatchery',
      kind: 'marketChanged',
      ListenerPostsSent: 7,
      ListenerGoneConnections: 2,
      ListenerFailedPosts: 1,
      FanOutSkippedPosts: 4,
      UndeliveredPosts: 5,
      FanOutShardTime: 40,
    });
  });
});
