import { accountLimits } from './limits';

/** The caller as the identity provider's token describes them (docs/http-api.md, Calling a protected endpoint). */
export interface Identity {
  userId: string;
  email?: string;
  name?: string;
}

/** Firebase/Google securetoken: the issuer of a project's ID tokens; their audience is the project id. */
export const issuerFor = (projectId: string) => `https://securetoken.google.com/${projectId}`;

const nonEmptyString = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The identity in verified claims: `user_id`, else `sub`; undefined when the token names no user. */
export function identityFromClaims(claims: Readonly<Record<string, unknown>>): Identity | undefined {
  const userId = nonEmptyString(claims.user_id) ?? nonEmptyString(claims.sub);
  if (!userId) return undefined;
  const identity: Identity = { userId };
  const email = nonEmptyString(claims.email);
  const name = nonEmptyString(claims.name);
  if (email !== undefined) identity.email = email;
  if (name !== undefined) identity.name = name;
  return identity;
}

const isPast = (claim: unknown, nowSeconds: number): boolean =>
  typeof claim === 'number' && Number.isFinite(claim) && claim <= nowSeconds + accountLimits.tokenClockSkewSeconds;

/**
 * Firebase's published rules for an ID token that a generic JWT verifier
 * leaves out (aws-jwt-verify checks signature, `iss`, `aud` and `exp`):
 * `iat` and `auth_time` in the past, give or take the allowed clock skew, and
 * `sub` a non-empty string. Answers the first rule broken, if any.
 */
export function brokenIdTokenRule(claims: Readonly<Record<string, unknown>>, nowSeconds: number): string | undefined {
  if (!isPast(claims.iat, nowSeconds)) return 'iat is not in the past';
  if (!isPast(claims.auth_time, nowSeconds)) return 'auth_time is not in the past';
  if (nonEmptyString(claims.sub) === undefined) return 'sub is not a non-empty string';
  return undefined;
}
