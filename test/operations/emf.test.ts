import { Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { metricsDisabled, type EmfOutput } from '@hatchery/platform/telemetry/emf';
import { createMetrics, metricCatalog, setEmfSink, type Metrics } from '@hatchery/platform/telemetry/metrics';

/**
 * The service writes its EMF documents itself (core/emf.ts); these are the
 * documents Powertools Metrics writes for the same calls, which CloudWatch,
 * the alarms and the listener's log metric filters were built against.
 */
type Target = Pick<Metrics, 'addMetric' | 'addDimension' | 'addDimensions' | 'publishStoredMetrics' | 'captureColdStartMetric'>;

const request = (target: Target) => {
  target.addDimensions({ route: 'GET /editions' });
  target.addDimensions({});
  target.addMetric('Requests', metricCatalog.Requests.unit, 1);
  target.addMetric('Latency', metricCatalog.Latency.unit, 3.25);
  target.addMetric('DatabaseTime', metricCatalog.DatabaseTime.unit, 1.5);
  target.addMetric('DatabaseTime', metricCatalog.DatabaseTime.unit, 0.5);
  target.publishStoredMetrics();
};

const event = (target: Target) => {
  target.addDimension('kind', 'marketChanged');
  target.addMetric('ListenerEvents', 'Count', 1);
  target.addMetric('ListenerFanOutTime', 'Milliseconds', 12);
  target.publishStoredMetrics();
};

const plain = (target: Target) => {
  target.addMetric('IndexerLag', 'Seconds', 4);
  target.publishStoredMetrics();
  // Nothing added: nothing published.
  target.publishStoredMetrics();
};

const coldStart = (target: Target) => {
  target.captureColdStartMetric('hatchery-dev-ListEditions');
  target.captureColdStartMetric('hatchery-dev-ListEditions');
};

/** What Powertools prints for `calls`, one document a line through its own Console. */
function powertools(calls: (target: Target) => void): EmfOutput[] {
  const lines: EmfOutput[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    lines.push(JSON.parse(String(chunk)) as EmfOutput);
    return true;
  });
  try {
    calls(new PowertoolsMetrics({ namespace: 'Hatchery', serviceName: 'hatchery' }) as unknown as Target);
  } finally {
    spy.mockRestore();
  }
  return lines;
}

function ours(calls: (target: Target) => void): EmfOutput[] {
  const documents: EmfOutput[] = [];
  setEmfSink((document) => documents.push(document));
  try {
    calls(createMetrics());
  } finally {
    setEmfSink(undefined);
  }
  return documents;
}

describe('EMF documents', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
  });

  it.each([
    ['a request: two dimension sets, a metric added twice', request],
    ['an event: a dimension', event],
    ['the default dimension alone, and nothing for nothing', plain],
    ['the cold start, once, with the function name', coldStart],
  ])('writes what Powertools writes for %s', (_name, calls) => {
    vi.useFakeTimers({ now: 1_760_000_000_000, toFake: ['Date'] });
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const expected = powertools(calls);
    expect(expected.length).toBeGreaterThan(0);
    expect(ours(calls)).toEqual(expected);
    // Key order too: a log metric filter reads the line as text.
    expect(ours(calls).map((document) => JSON.stringify(document))).toEqual(expected.map((document) => JSON.stringify(document)));
  });

  it('counts no cold start where Powertools counted none: a provisioned instance, or outside Lambda', () => {
    for (const type of ['provisioned-concurrency', undefined]) {
      vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', type);
      expect(powertools(coldStart)).toEqual([]);
      expect(ours(coldStart)).toEqual([]);
    }
  });

  it('is disabled as Powertools was: POWERTOOLS_METRICS_DISABLED when set, else POWERTOOLS_DEV', () => {
    expect(metricsDisabled({})).toBe(false);
    expect(metricsDisabled({ POWERTOOLS_METRICS_DISABLED: 'true' })).toBe(true);
    expect(metricsDisabled({ POWERTOOLS_METRICS_DISABLED: 'ON' })).toBe(true);
    expect(metricsDisabled({ POWERTOOLS_DEV: 'yes' })).toBe(true);
    expect(metricsDisabled({ POWERTOOLS_DEV: 'yes', POWERTOOLS_METRICS_DISABLED: 'false' })).toBe(false);
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', '1');
    expect(ours(request)).toEqual([]);
  });
});
