import { resolve } from 'node:path';
import * as z from 'zod';
import { StartupError } from './record';

/** An empty variable counts as unset, as in the service's configuration. */
const unsetWhenEmpty = (value: unknown) => (value === '' ? undefined : value);

/** The variables only the local commands read (npm start, token, simulate); the service's own are in @hatchery/core/config. */
export const localSettingsSchema = z.object({
  PORT: z.preprocess(unsetWhenEmpty, z.coerce.number().int().min(0).max(65_535).default(3000)),
  HATCHERY_DATA_DIR: z.preprocess(unsetWhenEmpty, z.string().default('.hatchery').transform((dir) => resolve(dir))),
  /**
   * Whether `npm start` fills an absent indexer schema with demo data: `auto` does on the embedded database only, never on
   * the one DATABASE_URL names (a real indexer's, where tables of ours would stop Ponder from creating its own).
   */
  HATCHERY_DEMO_DATA: z.preprocess(unsetWhenEmpty, z.enum(['auto', 'true', 'false']).default('auto')),
  /** Human-readable logs (pino-pretty) or JSON lines; by default pretty when stdout is a terminal. */
  LOG_FORMAT: z.preprocess(unsetWhenEmpty, z.enum(['pretty', 'json']).optional()),
});

export type LocalSettings = z.output<typeof localSettingsSchema>;

export function localSettings(env: NodeJS.ProcessEnv = process.env): LocalSettings {
  const parsed = localSettingsSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new StartupError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
}
