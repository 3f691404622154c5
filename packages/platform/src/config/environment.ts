import { Resource } from 'sst/resource';
import type * as z from '../schema';

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
} as const;

type Links = Readonly<Record<string, unknown>>;

/**
 * The links SST hands this process, opened by `sst`'s own `Resource`: sealed
 * in SST_KEY_FILE for a Lambda function, SST_RESOURCE_<Name> for a container.
 * The local stack has none; its variables are plain.
 */
export function sstLinks(): Links {
  // Copied out, not handed on: `Resource` throws when asked for a name it does not hold.
  const linked = Resource as unknown as Links;
  return Object.fromEntries(Object.keys(linked).map((name) => [name, linked[name]]));
}

/** The variables as the service reads them: each linked one that `env` leaves unset takes its link's value. */
function withLinks(env: NodeJS.ProcessEnv, links: Links): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = { ...env };
  for (const [variable, { name, property }] of Object.entries(linkedResources)) {
    const value = (links[name] as Record<string, unknown> | undefined)?.[property];
    if (typeof value === 'string') merged[variable] ??= value;
  }
  return merged;
}

/** `variables` read by `schema`, or an error that names every one that is wrong. */
export function parseSettings<Schema extends z.ZodMiniType>(schema: Schema, variables: Record<string, string | undefined>): z.infer<Schema> {
  const parsed = schema.safeParse(variables);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((problem) => `${problem.path.join('.')}: ${problem.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

/** The settings `schema` reads from `env` and `links` (by default, this process's), or an error naming every one that is wrong. */
export function readSettings<Schema extends z.ZodMiniType>(schema: Schema, env: NodeJS.ProcessEnv = process.env, links: Links = sstLinks()): z.infer<Schema> {
  return parseSettings(schema, withLinks(env, links));
}

/**
 * One group of settings, validated on first read and kept for the process.
 * A function builds the schemas of the groups its code reads and no others:
 * each schema is work at every cold start.
 */
export function settingsReader<Schema extends z.ZodMiniType>(schema: Schema): () => z.infer<Schema> {
  let cached: z.infer<Schema> | undefined;
  return () => {
    cached ??= readSettings(schema);
    return cached;
  };
}
