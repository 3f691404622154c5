import * as z from '../schema';
import { settingsReader } from './environment';
import { nonEmpty } from './fields';

/** The identity provider whose tokens the account routes accept. */
export const identitySchema = z.object({
  IDP_PROJECT_ID: nonEmpty('hatchery-local'),
  IDP_JWKS_URL: z._default(z.url(), 'https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com'),
});

export const identitySettings = settingsReader(identitySchema);
