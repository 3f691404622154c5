import type { ServerResponse } from 'node:http';

/** One document of CloudWatch's embedded metric format, as Powertools Metrics prints it. */
export interface EmfDocument {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [field: string]: unknown;
}

interface Series {
  labels: Record<string, string>;
  sum: number;
  count: number;
}

interface Family {
  name: string;
  unit: string;
  series: Map<string, Series>;
}

/** A data point of an EMF document (a single value, or one of a metric's list); anything but a number is not one. */
function addValue(series: Series, value: unknown): void {
  if (typeof value !== 'number') return;
  series.sum += value;
  series.count++;
}

const snake = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
const labelText = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');

/**
 * The metrics of the EMF documents seen, as Prometheus text: a counter
 * (`_total`) per Count metric, a summary (`_sum`, `_count`) per timing;
 * one series per dimension set, as CloudWatch keeps one metric per set.
 */
export function metricsRegistry() {
  const families = new Map<string, Family>();
  const listeners = new Set<(document: EmfDocument, line: string) => void>();
  // Every request's document names the same few dimension sets with the same few values (metrics.ts keeps them bounded).
  const labelSets = new Map<string, { labels: Record<string, string>; key: string }>();
  const labelSetOf = (dimensionSet: readonly string[], document: EmfDocument) => {
    let id = '';
    for (const dimension of dimensionSet) id += `${dimension}\u0000${String(document[dimension] ?? '')}\u0001`;
    let found = labelSets.get(id);
    if (!found) {
      const labels = Object.fromEntries([...dimensionSet].sort().map((dimension) => [dimension, String(document[dimension] ?? '')]));
      found = { labels, key: labelText(labels) };
      labelSets.set(id, found);
    }
    return found;
  };
  const add = (document: EmfDocument) => {
    if (listeners.size) {
      const line = JSON.stringify(document);
      for (const listener of listeners) listener(document, line);
    }
    for (const directive of document._aws.CloudWatchMetrics) {
      const sets = directive.Dimensions.map((dimensionSet) => labelSetOf(dimensionSet, document));
      for (const metric of directive.Metrics) {
        const raw = document[metric.Name];
        let family = families.get(metric.Name);
        if (!family) families.set(metric.Name, (family = { name: metric.Name, unit: metric.Unit, series: new Map() }));
        for (const { labels, key } of sets) {
          let series = family.series.get(key);
          if (!series) family.series.set(key, (series = { labels, sum: 0, count: 0 }));
          if (Array.isArray(raw)) for (const value of raw) addValue(series, value);
          else addValue(series, raw);
        }
      }
    }
  };
  /** One series: the metric under exactly these dimensions; zeros when none was seen. */
  const series = (name: string, labels: Record<string, string>): { sum: number; count: number } => {
    const sorted = Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
    const found = families.get(name)?.series.get(labelText(sorted));
    return { sum: found?.sum ?? 0, count: found?.count ?? 0 };
  };
  const render = () => {
    const lines: string[] = [];
    for (const family of [...families.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      const counter = family.unit === 'Count';
      const name = `hatchery_${snake(family.name)}${counter ? '_total' : `_${family.unit.toLowerCase()}`}`;
      lines.push(`# TYPE ${name} ${counter ? 'counter' : 'summary'}`);
      for (const series of family.series.values()) {
        const labels = `{${labelText(series.labels)}}`;
        if (counter) lines.push(`${name}${labels} ${series.sum}`);
        else lines.push(`${name}_sum${labels} ${series.sum}`, `${name}_count${labels} ${series.count}`);
      }
    }
    return `${lines.join('\n')}\n`;
  };
  /** Calls `listener` with every document from now on (and the line it prints as in AWS); returns the undo. */
  const subscribe = (listener: (document: EmfDocument, line: string) => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  return { add, series, render, subscribe };
}

export type MetricsRegistry = ReturnType<typeof metricsRegistry>;

/** GET /metrics on the local gateway. */
export const serveMetrics = (registry: MetricsRegistry) => (_request: unknown, response: ServerResponse) => {
  response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' });
  response.end(registry.render());
};
