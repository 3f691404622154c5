import { JwtVerifier } from 'aws-jwt-verify';
import {
  FetchError,
  JwtBaseError,
  JwtExpiredError,
  JwtInvalidAudienceError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtParseError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
  NonRetryableFetchError,
  WaitPeriodNotYetEndedJwkError,
} from 'aws-jwt-verify/error';
import type { Fetcher } from 'aws-jwt-verify/https';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { brokenIdTokenRule, identityFromClaims, issuerFor, type Identity } from '@hatchery/core/accounts/identity';
import { identitySettings } from '@hatchery/platform/config/identity';
import { AppError } from '@hatchery/core/errors';
import { addLogContext } from '@hatchery/platform/telemetry/logger';
import { tokenRefused, type TokenRefusal } from '../security-events';
import type { HttpMiddleware } from './types';

class InvalidTokenError extends Error {}

const jwksTimeoutMs = 3_000;

/** aws-jwt-verify's own fetcher speaks https only; the local identity provider serves its JWKS over http. */
const jwksFetcher: Fetcher = {
  fetch: async (uri) => {
    let response: Response;
    try {
      response = await fetch(uri, { signal: AbortSignal.timeout(jwksTimeoutMs) });
    } catch (error) {
      throw new FetchError(uri, error instanceof Error ? error.message : String(error));
    }
    if (!response.ok) throw new NonRetryableFetchError(uri, `status ${response.status}`);
    return response.arrayBuffer();
  },
};

function createVerifier() {
  const { IDP_PROJECT_ID, IDP_JWKS_URL } = identitySettings();
  return JwtVerifier.create(
    {
      issuer: issuerFor(IDP_PROJECT_ID),
      audience: IDP_PROJECT_ID,
      jwksUri: IDP_JWKS_URL,
      customJwtCheck: ({ header, payload }) => {
        // The library accepts any algorithm the key allows and treats `exp` as optional; ID tokens are RS256 and always expire.
        if (header.alg !== 'RS256') throw new InvalidTokenError('the token is not RS256');
        if (payload.exp === undefined) throw new InvalidTokenError('the token has no expiry');
        const broken = brokenIdTokenRule(payload, Date.now() / 1000);
        if (broken) throw new InvalidTokenError(broken);
      },
    },
    { jwksCache: new SimpleJwksCache({ fetcher: jwksFetcher }) },
  );
}

// Module scope: one verifier, and so one JWKS cache, per Lambda instance, reused across invocations.
let verifier: ReturnType<typeof createVerifier> | undefined;

/** What each failed check of the token is refused as, the first that the error is an instance of. */
const refusalsByError: [abstract new (...args: never[]) => Error, TokenRefusal][] = [
  [JwtParseError, 'malformed'],
  [JwtInvalidSignatureError, 'badSignature'],
  [JwtInvalidSignatureAlgorithmError, 'badSignature'],
  [JwtWithoutValidKidError, 'unknownKey'],
  [KidNotFoundInJwksError, 'unknownKey'],
  [WaitPeriodNotYetEndedJwkError, 'unknownKey'],
  [JwtInvalidIssuerError, 'wrongIssuer'],
  [JwtInvalidAudienceError, 'wrongAudience'],
  [JwtExpiredError, 'expired'],
  [JwtNotBeforeError, 'notYetValid'],
  [InvalidTokenError, 'brokenRule'],
  [JwtBaseError, 'invalid'],
];

/** A 401, with its line in the audit trail. */
function refuse(reason: TokenRefusal, detail: string, error?: string): AppError {
  tokenRefused(reason);
  return new AppError('unauthorized', detail, undefined, error ? { 'www-authenticate': `Bearer error="${error}"` } : undefined);
}

/** Verifies an identity-provider ID token by every rule Firebase publishes (signature by the JWKS, issuer, audience, times, subject) and returns its identity; 401 otherwise. */
export async function verifyIdToken(token: string): Promise<Identity> {
  verifier ??= createVerifier();
  let payload: Record<string, unknown>;
  try {
    payload = await verifier.verify(token);
  } catch (error) {
    if (error instanceof FetchError) throw new AppError('unavailable', 'The identity provider’s keys cannot be fetched; try again shortly.');
    const reason = refusalsByError.find(([type]) => error instanceof type)?.[1];
    if (reason === undefined) throw error;
    throw refuse(reason, reason === 'expired' ? 'The bearer token has expired.' : 'The bearer token is invalid.', 'invalid_token');
  }
  const identity = identityFromClaims(payload);
  if (!identity) throw refuse('brokenRule', 'The bearer token names no user.', 'invalid_token');
  return identity;
}

const bearer = /^Bearer +([^\s]+) *$/i;

/** The token of an `Authorization: Bearer <token>` header, if there is one. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization?.match(bearer)?.[1];
}

/** Puts the verified caller on the context; 401 with `WWW-Authenticate: Bearer` when the token is missing or invalid. */
export const authenticate = (): HttpMiddleware => ({
  before: async (request) => {
    const token = bearerToken(request.event.headers?.authorization);
    if (!token) throw refuse('missing', 'A bearer token is required.');
    const caller = await verifyIdToken(token);
    request.context.caller = caller;
    addLogContext({ accountId: caller.userId });
  },
});
