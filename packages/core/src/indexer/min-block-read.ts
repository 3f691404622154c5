import { cachedFreshness } from './freshness';
import { readPooledFreshness } from './freshness-read';
import { minBlockLimits } from './min-block';

/**
 * This instance's view of the index, read at most once per poll interval:
 * what requests waiting for a `minBlock` poll, so that however many wait on
 * one instance, the database sees one short query per interval, on a pooled
 * connection held only for it.
 */
export const polledFreshness = cachedFreshness(readPooledFreshness, minBlockLimits.pollMs);
