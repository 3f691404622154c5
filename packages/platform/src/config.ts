import { createDecipheriv } from 'node:crypto';
import * as z from './schema';

/** As stdout.ts takes it: no ESM namespace of node:fs, which would load fs/promises at every cold start. */
const { readFileSync } = process.getBuiltinModule('node:fs');

const list = z.pipe(
  z._default(z.string(), ''),
  z.transform((value: string) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  ),
);

// Shared by the variables below: every schema built here is work at every function's cold start.
const wholeNumber = z.coerce.number().check(z.int(), z.gte(0));
const nonEmpty = z.string().check(z.minLength(1));
const optionalUrl = z.optional(z.url());

/* @__NO_SIDE_EFFECTS__ */
function positiveInt(fallback: number) {
  return z._default(wholeNumber, fallback);
}

/** Every environment variable the service reads; docs/local-stack.md's configuration table mirrors this. */
export const configSchema = z.object({
  DATABASE_URL: z.url(),
  DATABASE_POOL_MAX: positiveInt(10),
  /**
   * The schema the indexer writes, Ponder's `--schema` or `--views-schema`; its channel is `<schema>_live_query`,
   * as Ponder names it. Lowercase, and short enough that the channel stays within PostgreSQL's 63-byte names.
   */
  INDEXER_SCHEMA: z._default(
    z.string().check(z.regex(/^[a-z_][a-z0-9_]{0,51}$/, 'a lowercase PostgreSQL name of at most 52 characters (letters, digits, _)')),
    'indexer',
  ),
  DATABASE_SSL: z.pipe(
    z._default(z.enum(['true', 'false']), 'false'),
    z.transform((value: 'true' | 'false') => value === 'true'),
  ),
  DYNAMODB_ENDPOINT: optionalUrl,
  DYNAMODB_TABLE: z._default(nonEmpty, 'hatchery'),
  AWS_REGION: z._default(nonEmpty, 'us-east-1'),
  IDP_PROJECT_ID: z._default(nonEmpty, 'hatchery-local'),
  IDP_JWKS_URL: z._default(z.url(), 'https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com'),
  CORS_ORIGINS: list,
  CORS_ALLOWED_HOST_SUFFIXES: list,
  SERVICE_NAME: z._default(nonEmpty, 'Hatchery'),
  LOG_LEVEL: z._default(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  IP_RATE_LIMIT_PER_SECOND: positiveInt(200),
  WALLET_POSTS_PER_MINUTE: z._default(z.coerce.number().check(z.int(), z.gte(1)), 5),
  WEBSOCKET_MANAGEMENT_ENDPOINT: optionalUrl,
  /** Set in AWS only (infra/router.ts): the value the router adds to every request; unset, no request is checked. */
  ORIGIN_VERIFY_SECRET: z.optional(z.string().check(z.minLength(16))),
  /** The fan-out function the listener hands large broadcasts to, shard by shard; without it the listener posts every shard itself. */
  FANOUT_FUNCTION_NAME: z.optional(nonEmpty),
  /**
   * The fan-out budget: PostToConnection calls a second for every post together (the listener's and every shard's), a
   * tenth of it kept for forgeFulfilled. 5,000 by default, half of API Gateway's default throttle per account and Region
   * (10,000 a second), which every HTTP request and hub message spends too: the other half stays theirs. 0 sets no budget.
   */
  FANOUT_POSTS_PER_SECOND: positiveInt(5_000),
  /**
   * The least time between two marketChanged broadcasts, whatever the market does: the cost ceiling. 1 s by default: at
   * most one broadcast a second (2.6 million messages per always-connected client-month) even on a chain of 250 ms blocks,
   * and clients still see a change well within the 5 s fallback read.
   */
  FANOUT_MIN_INTERVAL_MS: positiveInt(1_000),
  /** The Lambda API the listener invokes the fan-out function through (the local stack's); AWS's by default. */
  LAMBDA_ENDPOINT: optionalUrl,
  /** CloudWatch namespace of the service's metrics; one per stage, so stages sharing an account stay apart. */
  METRICS_NAMESPACE: z._default(z.string().check(z.minLength(1), z.maxLength(255)), 'Hatchery'),
});

export type Config = z.infer<typeof configSchema>;

/**
 * The SST resources infra/ links to the functions and the listener: for each
 * variable, the resource's name and the property it is read from.
 */
export const linkedResources = {
  DATABASE_URL: { name: 'DatabaseUrl', property: 'value' },
  IDP_PROJECT_ID: { name: 'IdpProjectId', property: 'value' },
  CORS_ORIGINS: { name: 'CorsOrigins', property: 'value' },
  CORS_ALLOWED_HOST_SUFFIXES: { name: 'CorsAllowedHostSuffixes', property: 'value' },
  DYNAMODB_TABLE: { name: 'Table', property: 'name' },
  ORIGIN_VERIFY_SECRET: { name: 'OriginVerify', property: 'value' },
  FANOUT_FUNCTION_NAME: { name: 'FanOut', property: 'name' },
} as const satisfies Partial<Record<keyof Config, { name: string; property: string }>>;

/**
 * SST hands linked resources over in two ways: a container gets
 * SST_RESOURCE_<Name> = JSON; a Lambda function gets them sealed in the file
 * SST_KEY_FILE (AES-256-GCM under the base64 key SST_KEY, zero nonce, tag
 * last), which is what `Resource` from `sst` opens. Reading both here lets AWS
 * and the local stack (plain variables) share one code path.
 */
function fromSstResources(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const linked: Record<string, unknown> = {};
  if (env.SST_KEY && env.SST_KEY_FILE) {
    const sealed = readFileSync(env.SST_KEY_FILE);
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(env.SST_KEY, 'base64'), Buffer.alloc(12));
    decipher.setAuthTag(sealed.subarray(-16));
    Object.assign(linked, JSON.parse(Buffer.concat([decipher.update(sealed.subarray(0, -16)), decipher.final()]).toString('utf8')));
  }
  for (const [key, raw] of Object.entries(env)) {
    if (!key.startsWith('SST_RESOURCE_') || !raw) continue;
    try {
      linked[key.slice('SST_RESOURCE_'.length)] = JSON.parse(raw);
    } catch {
      // Not a resource of ours; validation below names any variable still missing.
    }
  }
  return Object.fromEntries(
    Object.entries(linkedResources).map(([variable, { name, property }]) => {
      const value = (linked[name] as Record<string, unknown> | undefined)?.[property];
      return [variable, typeof value === 'string' ? value : undefined];
    }),
  );
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
