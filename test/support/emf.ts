import type { EmfDocument } from '@hatchery/local/metrics';

/** The EMF document a line of output holds, if it holds one. */
export function parseEmf(line: string): EmfDocument | undefined {
  if (!line.startsWith('{"_aws"')) return undefined;
  try {
    const parsed = JSON.parse(line) as EmfDocument;
    return Array.isArray(parsed._aws?.CloudWatchMetrics) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
