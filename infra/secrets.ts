import { linkedResources } from '@hatchery/platform/config';

export interface Secrets {
  idpProjectId: sst.Secret;
  corsOrigins: sst.Secret;
  corsAllowedHostSuffixes: sst.Secret;
  /** Generated per stage: the router adds it to every request, the functions refuse requests without it. */
  originVerify: sst.Linkable<{ value: $util.Output<string> }>;
}

/**
 * Per-stage values set with `npx sst secret set <Name> <value> --stage <stage>`.
 * The identity project has no default: a deploy without it fails rather than
 * trust the wrong issuer. An empty CORS setting allows no browser origin.
 */
export function createSecrets(): Secrets {
  // Letters and digits only: it is written into the router's CloudFront Function as a string literal.
  const originVerify = new random.RandomPassword('OriginVerifySecret', { length: 40, special: false });
  return {
    idpProjectId: new sst.Secret(linkedResources.IDP_PROJECT_ID.name),
    corsOrigins: new sst.Secret(linkedResources.CORS_ORIGINS.name, ''),
    corsAllowedHostSuffixes: new sst.Secret(linkedResources.CORS_ALLOWED_HOST_SUFFIXES.name, ''),
    originVerify: new sst.Linkable(linkedResources.ORIGIN_VERIFY_SECRET.name, { properties: { value: $util.secret(originVerify.result) } }),
  };
}
