/**
 * CloudWatch's embedded metric format: metrics written as JSON log lines that
 * CloudWatch turns into metrics (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
 *
 * The documents are the ones Powertools Metrics wrote for the same calls
 * (test/operations/emf.test.ts holds them to it). Powertools itself cost a
 * function about 4 ms of its cold start, mostly in the Node Console it builds
 * on process.stdout and stderr for its own writing, which the service never
 * used, and a fifth of a warm call's overhead in its stores and checks
 * (issue 21); what the service needs of it is this file.
 */

export type MetricUnit = 'Count' | 'Milliseconds' | 'Seconds';

export interface EmfOutput {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: [{ Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: MetricUnit }[] }];
  };
  [key: string]: unknown;
}

/** What an invocation has added so far. */
export interface StoredMetrics {
  values: Map<string, { unit: MetricUnit; value: number | number[] }>;
  dimensions: Record<string, string>;
  dimensionSets: Record<string, string>[];
}

export const noMetrics = (): StoredMetrics => ({ values: new Map(), dimensions: {}, dimensionSets: [] });

/** POWERTOOLS_METRICS_DISABLED (1, y, yes, t, true, on) when set, else POWERTOOLS_DEV: the variables Powertools read, kept so deployments keep their meaning. */
export function metricsDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const truthy = (value: string | undefined) => ['1', 'y', 'yes', 't', 'true', 'on'].includes(value?.trim().toLowerCase() ?? '');
  return env.POWERTOOLS_METRICS_DISABLED !== undefined ? truthy(env.POWERTOOLS_METRICS_DISABLED) : truthy(env.POWERTOOLS_DEV);
}

/** One document of what was stored, under `namespace`, with the default dimensions in every dimension set. */
export function serialize(namespace: string, defaults: Record<string, string>, stored: StoredMetrics, timestamp = Date.now()): EmfOutput {
  const defaultNames = Object.keys(defaults);
  const dimensionNames: string[][] = [];
  if (Object.keys(stored.dimensions).length > 0) dimensionNames.push([...new Set([...defaultNames, ...Object.keys(stored.dimensions)])]);
  for (const set of stored.dimensionSets) dimensionNames.push([...new Set([...defaultNames, ...Object.keys(set)])]);
  if (dimensionNames.length === 0 && defaultNames.length > 0) dimensionNames.push(defaultNames);
  const document: EmfOutput = {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [{ Namespace: namespace, Dimensions: dimensionNames, Metrics: [...stored.values].map(([name, { unit }]) => ({ Name: name, Unit: unit })) }],
    },
    ...defaults,
    ...stored.dimensions,
  };
  for (const set of stored.dimensionSets) Object.assign(document, set);
  for (const [name, { value }] of stored.values) document[name] = value;
  return document;
}

/** Adds one value; a metric added again in the same document holds all its values, as EMF allows. */
export function store(stored: StoredMetrics, name: string, unit: MetricUnit, value: number): void {
  const existing = stored.values.get(name);
  if (!existing) stored.values.set(name, { unit, value });
  else if (existing.unit !== unit) throw new Error(`Metric "${name}" has already been added with unit "${existing.unit}", but we received unit "${unit}".`);
  else existing.value = [...(Array.isArray(existing.value) ? existing.value : [existing.value]), value];
}
