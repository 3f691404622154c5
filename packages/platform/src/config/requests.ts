import * as z from '../schema';
import { settingsReader } from './environment';
import { list } from './fields';

/** Who may call the APIs, and by which way in. */
export const requestsSchema = z.object({
  CORS_ORIGINS: list(),
  CORS_ALLOWED_HOST_SUFFIXES: list(),
  /** Set in AWS only (infra/router.ts): the value the router adds to every request; unset, no request is checked. */
  ORIGIN_VERIFY_SECRET: z.optional(z.string().check(z.minLength(16))),
});

export const requestsSettings = settingsReader(requestsSchema);
