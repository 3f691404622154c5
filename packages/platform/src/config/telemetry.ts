import * as z from '../schema';

/**
 * Logs and metrics. No reader of the group: the logger takes LOG_LEVEL as Powertools does, and metrics.ts parses
 * METRICS_NAMESPACE alone, so a wrong value never silences a function's logs or metrics.
 */
export const telemetrySchema = z.object({
  LOG_LEVEL: z._default(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  /** CloudWatch namespace of the service's metrics; one per stage, so stages sharing an account stay apart. */
  METRICS_NAMESPACE: z._default(z.string().check(z.minLength(1), z.maxLength(255)), 'Hatchery'),
});
