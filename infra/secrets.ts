import { linkedResources } from '@hatchery/core/config';

export interface Secrets {
  idpProjectId: sst.Secret;
  corsOrigins: sst.Secret;
  corsAllowedHostSuffixes: sst.Secret;
}

/**
 * Per-stage values set with `npx sst secret set <Name> <value> --stage <stage>`.
 * The identity project has no default: a deploy without it fails rather than
 * trust the wrong issuer. An empty CORS setting allows no browser origin.
 */
export function createSecrets(): Secrets {
  return {
    idpProjectId: new sst.Secret(linkedResources.IDP_PROJECT_ID.name),
    corsOrigins: new sst.Secret(linkedResources.CORS_ORIGINS.name, ''),
    corsAllowedHostSuffixes: new sst.Secret(linkedResources.CORS_ALLOWED_HOST_SUFFIXES.name, ''),
  };
}
