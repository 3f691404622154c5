import * as z from './schema';
import { accountsSchema } from './config/accounts';
import { awsSchema } from './config/aws';
import { databaseSchema } from './config/database';
import { edgeSchema } from './config/edge';
import { linkedResources as links, settingsReader } from './config/environment';
import { eventsSchema } from './config/events';
import { fanOutSchema } from './config/fan-out';
import { identitySchema } from './config/identity';
import { requestsSchema } from './config/requests';
import { telemetrySchema } from './config/telemetry';

/**
 * Every environment variable the service reads, one group per file of
 * config/; docs/local-stack.md's configuration table mirrors this. A function
 * reads only its groups (`databaseSettings()`, …), so its cold start builds
 * no schema it never uses; the whole is for the listener, the local stack,
 * infra/ and the tests.
 */
export const configSchema = z.object({
  ...databaseSchema.shape,
  ...awsSchema.shape,
  ...identitySchema.shape,
  ...telemetrySchema.shape,
  ...requestsSchema.shape,
  ...edgeSchema.shape,
  ...accountsSchema.shape,
  ...fanOutSchema.shape,
  ...eventsSchema.shape,
});

type Config = z.infer<typeof configSchema>;

/** The whole configuration, validated once per process. */
export const config = settingsReader(configSchema);

/** The SST resources infra/ links; the type check fails here if one is for a variable the configuration does not read. */
export const linkedResources: Exclude<keyof typeof links, keyof Config> extends never ? typeof links : never = links;
