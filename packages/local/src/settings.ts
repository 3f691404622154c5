import { resolve } from 'node:path';
import * as z from '@hatchery/platform/schema';
import { StartupError } from './record';

/** `schema`, where an empty variable counts as unset, as in the service's configuration. */
/* @__NO_SIDE_EFFECTS__ */
function unsetWhenEmpty<T extends z.ZodMiniType>(schema: T) {
  return z.pipe(
    z.transform((value: unknown) => (value === '' ? undefined : value)),
    schema,
  );
}

/** The variables only the local commands read (npm start, token, simulate); the service's own are in @hatchery/platform/config. */
export const localSettingsSchema = z.object({
  PORT: unsetWhenEmpty(z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(65_535)), 3000)),
  HATCHERY_DATA_DIR: unsetWhenEmpty(
    z.pipe(
      z._default(z.string(), '.hatchery'),
      z.transform((dir: string) => resolve(dir)),
    ),
  ),
  /**
   * Whether `npm start` fills an absent indexer schema with demo data: `auto` does on the embedded database only, never on
   * the one DATABASE_URL names (a real indexer's, where tables of ours would stop Ponder from creating its own).
   */
  HATCHERY_DEMO_DATA: unsetWhenEmpty(z._default(z.enum(['auto', 'true', 'false']), 'auto')),
  /**
   * The account's API Gateway throttle, modelled by the local gateway (gateway/quota.ts): requests a second shared by
   * HTTP requests, hub connects and messages in, and management API calls. 0, the default, models none: one developer's
   * stack never reaches AWS's 10,000 a second, and tests that need the quota turn it on.
   */
  HATCHERY_QUOTA_PER_SECOND: unsetWhenEmpty(z._default(z.coerce.number().check(z.int(), z.gte(0)), 0)),
  /** The throttle's burst (its bucket's size); unset, half the rate, as AWS's defaults are (10,000 a second, 5,000 burst). */
  HATCHERY_QUOTA_BURST: unsetWhenEmpty(z.optional(z.coerce.number().check(z.int(), z.gte(1)))),
  /** Human-readable logs (pino-pretty) or JSON lines; by default pretty when stdout is a terminal. */
  LOG_FORMAT: unsetWhenEmpty(z.optional(z.enum(['pretty', 'json']))),
});

export type LocalSettings = z.output<typeof localSettingsSchema>;

export function localSettings(env: NodeJS.ProcessEnv = process.env): LocalSettings {
  const parsed = localSettingsSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new StartupError(parsed.error.issues.map((problem) => `${problem.path.join('.')}: ${problem.message}`).join('; '));
}

/** The local gateway's model of the account's throttle, from the settings. */
export function quotaSettings(settings: Pick<LocalSettings, 'HATCHERY_QUOTA_PER_SECOND' | 'HATCHERY_QUOTA_BURST'>): { perSecond: number; burst: number } {
  const perSecond = settings.HATCHERY_QUOTA_PER_SECOND;
  return { perSecond, burst: settings.HATCHERY_QUOTA_BURST ?? Math.max(1, Math.floor(perSecond / 2)) };
}
