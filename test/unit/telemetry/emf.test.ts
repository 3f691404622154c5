import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { publishMetrics, requestMetrics } from '@hatchery/functions/middleware/metrics';
import { lambdaContext } from '@hatchery/local/gateway/lambda';
import { useLogDestination } from '@hatchery/platform/telemetry/logger';
import { addMetric, createMetrics, type EmfOutput, metricCatalog, metrics, publishWith, setEmfSink } from '@hatchery/platform/telemetry/metrics';

/**
 * The EMF documents Powertools Metrics writes for the service, through the
 * service's own middlewares where it can: their shape (which CloudWatch, the
 * alarms and the listener's log metric filters read), and the limits
 * Powertools and the service hold them to, none of which ever fails a request.
 */
let documents: EmfOutput[];
let logLines: Record<string, unknown>[];

beforeEach(() => {
  documents = [];
  logLines = [];
  setEmfSink((document) => documents.push(document));
  useLogDestination({ write: (line: string) => logLines.push(JSON.parse(line)) });
});

afterEach(() => {
  setEmfSink(undefined);
  vi.unstubAllEnvs();
});

/** A Middy chain as the HTTP functions' metrics middlewares make it, around `run`. */
function request(run: () => void | Promise<void>) {
  const handler = middy<unknown, { statusCode: number }, Error, Context>()
    .use(publishMetrics())
    .use(requestMetrics('GET /editions'))
    .handler(async () => {
      await run();
      return { statusCode: 200 };
    });
  return handler({}, lambdaContext('emf-test'));
}

const names = (document: EmfOutput) => document._aws.CloudWatchMetrics[0]!.Metrics.map((metric) => metric.Name);

describe('EMF documents', () => {
  it("of a request: the namespace, the dimension sets [service, route] and [service], the catalog's units, a metric added twice holding both values", async () => {
    const answer = await request(() => {
      addMetric('AccountsProvisioned');
      addMetric('AccountsProvisioned');
    });
    expect(answer.statusCode).toBe(200);
    expect(documents).toHaveLength(1);
    const [document] = documents;
    expect(Object.keys(document!)).toEqual(['_aws', 'service', 'route', 'AccountsProvisioned', 'Requests', 'Latency', 'Responses5xx']);
    expect(document!._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'Hatchery',
        Dimensions: [['service', 'route'], ['service']],
        Metrics: names(document!).map((name) => ({ Name: name, Unit: metricCatalog[name as keyof typeof metricCatalog].unit })),
      },
    ]);
    expect(document).toMatchObject({ service: 'hatchery', route: 'GET /editions', AccountsProvisioned: [1, 1], Requests: 1, Responses5xx: 0 });
    expect(Math.abs(document!._aws.Timestamp - Date.now())).toBeLessThan(60_000);
  });

  it('of an event, apart: its own dimension beside service, published at once', () => {
    publishWith({ name: 'kind', value: 'marketChanged' }, { ListenerEvents: 1, ListenerPostsSent: 3 });
    expect(documents).toEqual([
      {
        _aws: {
          Timestamp: expect.any(Number),
          CloudWatchMetrics: [
            {
              Namespace: 'Hatchery',
              Dimensions: [['service', 'kind']],
              Metrics: [
                { Name: 'ListenerEvents', Unit: 'Count' },
                { Name: 'ListenerPostsSent', Unit: 'Count' },
              ],
            },
          ],
        },
        service: 'hatchery',
        kind: 'marketChanged',
        ListenerEvents: 1,
        ListenerPostsSent: 3,
      },
    ]);
  });

  it('under METRICS_NAMESPACE, and none at all when POWERTOOLS_METRICS_DISABLED is true', () => {
    vi.stubEnv('METRICS_NAMESPACE', 'Hatchery/prod');
    createMetrics().addMetric('IndexerLag', 'Seconds', 4).publishStoredMetrics();
    expect(documents.map((document) => document._aws.CloudWatchMetrics[0]!.Namespace)).toEqual(['Hatchery/prod']);
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    createMetrics().addMetric('IndexerLag', 'Seconds', 4).publishStoredMetrics();
    expect(documents).toHaveLength(1);
  });

  it('count a cold start once, on an on-demand instance only, under service and the function name', () => {
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'provisioned-concurrency');
    createMetrics().captureColdStartMetric('hatchery-dev-ListEditions');
    expect(documents).toEqual([]);
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const instance = createMetrics();
    instance.captureColdStartMetric('hatchery-dev-ListEditions');
    instance.captureColdStartMetric('hatchery-dev-ListEditions');
    expect(documents).toEqual([
      {
        _aws: {
          Timestamp: expect.any(Number),
          CloudWatchMetrics: [{ Namespace: 'Hatchery', Dimensions: [['service', 'function_name']], Metrics: [{ Name: 'ColdStart', Unit: 'Count' }] }],
        },
        service: 'hatchery',
        function_name: 'hatchery-dev-ListEditions',
        ColdStart: 1,
      },
    ]);
  });

  it('publish nothing, and say nothing, for an invocation that added no metric', async () => {
    const handler = middy<unknown, string, Error, Context>()
      .use(publishMetrics())
      .handler(async () => 'nothing measured');
    expect(await handler({}, lambdaContext('emf-test'))).toBe('nothing measured');
    expect(documents).toEqual([]);
    expect(logLines).toEqual([]);
  });
});

describe('EMF limits', () => {
  it('flush more than 100 metrics of one invocation into several documents, and 100 values of one metric', async () => {
    await request(() => {
      for (let i = 0; i < 150; i++) metrics().addMetric(`Extra${i}`, 'Count', i);
    });
    expect(documents.map((document) => names(document).length)).toEqual([100, 53]);
    expect(new Set(documents.flatMap(names)).size).toBe(153);
    // The route's dimension sets are added as the request ends: the document flushed before carries `service` alone.
    expect(documents.map((document) => document._aws.CloudWatchMetrics[0]!.Dimensions)).toEqual([[['service']], [['service', 'route'], ['service']]]);
    documents = [];
    const single = createMetrics();
    for (let i = 0; i < 101; i++) single.addMetric('Latency', 'Milliseconds', i);
    single.publishStoredMetrics();
    expect(documents.map((document) => [document.Latency].flat().length)).toEqual([100, 1]);
  });

  it('refuse a 30th dimension: at most 29 with service, as CloudWatch takes 30', () => {
    const instance = createMetrics();
    for (let i = 1; i < 29; i++) instance.addDimension(`d${i}`, 'v');
    expect(() => instance.addDimension('d29', 'v')).toThrow(RangeError);
    expect(() => instance.addDimensions(Object.fromEntries(Array.from({ length: 29 }, (_, i) => [`s${i}`, 'v'])))).toThrow(RangeError);
    instance.addMetric('Requests', 'Count', 1).publishStoredMetrics();
    expect(documents[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', ...Array.from({ length: 28 }, (_, i) => `d${i + 1}`)]]);
  });

  it('refuse NaN and ±Infinity, which JSON would write as null, and never fail the request that added them', async () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])
      expect(() => createMetrics().addMetric('Latency', 'Milliseconds', value)).toThrow(RangeError);
    const answer = await request(() => {
      addMetric('WalletsLinked', Number.NaN);
      addMetric('ChallengesIssued', Number.POSITIVE_INFINITY);
    });
    expect(answer.statusCode).toBe(200);
    expect(documents).toHaveLength(1);
    expect(names(documents[0]!)).not.toContain('WalletsLinked');
    expect(names(documents[0]!)).not.toContain('ChallengesIssued');
    expect(documents[0]).toMatchObject({ Requests: 1 });
    expect(logLines.map((line) => [line.level, line.message, line.metric])).toEqual([
      ['WARN', 'metric refused', 'WalletsLinked'],
      ['WARN', 'metric refused', 'ChallengesIssued'],
    ]);
    publishWith({ name: 'kind', value: 'forgeFulfilled' }, { ListenerEvents: 1, ListenerFanOutTime: Number.NaN });
    expect(documents[1]).toMatchObject({ kind: 'forgeFulfilled', ListenerEvents: 1 });
    expect(documents[1]).not.toHaveProperty('ListenerFanOutTime');
  });

  it('log and drop a document that cannot be written (a metric named as a dimension), never failing the request', async () => {
    const answer = await request(() => {
      metrics().addMetric('route', 'Count', 1);
    });
    expect(answer.statusCode).toBe(200);
    expect(documents).toEqual([]);
    expect(logLines.map((line) => [line.level, line.message])).toContainEqual(['ERROR', 'metrics could not be published']);
  });
});
