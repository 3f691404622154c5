/** The caller as the identity provider's token describes them (SPEC.md "Authentication"). */
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
