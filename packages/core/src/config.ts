import { z } from 'zod';

const list = z
  .string()
  .default('')
  .transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean));

const positiveInt = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/** Every environment variable the service reads; README's configuration table mirrors this. */
export const configSchema = z.object({
  DATABASE_URL: z.string().url(),
  DATABASE_POOL_MAX: positiveInt(10),
  DATABASE_SSL: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
  DYNAMODB_ENDPOINT: z.string().url().optional(),
  DYNAMODB_TABLE: z.string().min(1).default('hatchery'),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  IDP_PROJECT_ID: z.string().min(1).default('hatchery-local'),
  IDP_JWKS_URL: z
    .string()
    .url()
    .default('https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com'),
  CORS_ORIGINS: list,
  CORS_ALLOWED_HOST_SUFFIXES: list,
  SERVICE_NAME: z.string().min(1).default('Hatchery'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  IP_RATE_LIMIT_PER_SECOND: positiveInt(200),
  WEBSOCKET_MANAGEMENT_ENDPOINT: z.string().url().optional(),
});

export type Config = z.infer<typeof configSchema>;

/**
 * SST exposes each linked resource as SST_RESOURCE_<Name> = JSON. The names
 * below are the ones infra/ links; reading them here lets AWS and the local
 * stack share one code path (the local stack sets plain variables instead).
 */
function fromSstResources(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const resource = (name: string): Record<string, unknown> | undefined => {
    const raw = env[`SST_RESOURCE_${name}`];
    if (!raw) return undefined;
    try {
      return JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  return {
    DATABASE_URL: str(resource('DatabaseUrl')?.value),
    IDP_PROJECT_ID: str(resource('IdpProjectId')?.value),
    CORS_ORIGINS: str(resource('CorsOrigins')?.value),
    CORS_ALLOWED_HOST_SUFFIXES: str(resource('CorsAllowedHostSuffixes')?.value),
    DYNAMODB_TABLE: str(resource('Table')?.name),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const merged: Record<string, string | undefined> = { ...env };
  for (const [key, value] of Object.entries(fromSstResources(env))) merged[key] ??= value;
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

let cached: Config | undefined;

/** The configuration, validated once per process. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
