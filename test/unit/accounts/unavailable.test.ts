import { generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@hatchery/local/ports';
import { unavailableRetryAfterSeconds } from '@hatchery/core/errors';

/**
 * When what the checks depend on cannot be reached, protected requests fail
 * as "unavailable" (503), never as a 401 that would send a valid user to log
 * in again, and never let a request through unchecked. No stack here: the
 * configuration points at ports where nothing listens.
 */
beforeAll(async () => {
  const closedPort = await freePort();
  Object.assign(process.env, {
    LOG_LEVEL: 'silent',
    DATABASE_URL: `postgres://nobody@127.0.0.1:${closedPort}/none`,
    DYNAMODB_ENDPOINT: `http://127.0.0.1:${closedPort}`,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    IDP_PROJECT_ID: 'hatchery-local',
    IDP_JWKS_URL: `http://127.0.0.1:${closedPort}/jwks.json`,
  });
});

async function token(): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256');
  return new SignJWT({ user_id: 'u1', email: 'u1@example.com' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer('https://securetoken.google.com/hatchery-local')
    .setAudience('hatchery-local')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
}

describe('dependencies out of reach', () => {
  it('a JWKS that cannot be fetched is 503, not 401', async () => {
    const { verifyIdToken } = await import('@hatchery/functions/middleware/authenticate');
    const { toProblem } = await import('@hatchery/core/errors');
    const error = await verifyIdToken(await token()).catch((caught: unknown) => caught);
    expect(toProblem(error, '/accounts/me').status).toBe(503);
  });

  it('a rate-limit counter that cannot be updated is 503 with Retry-After: the request is not let through', async () => {
    const { hitRateLimit, walletPostRateLimit } = await import('@hatchery/core/accounts/rate-limit');
    const { toProblem } = await import('@hatchery/core/errors');
    const error = await hitRateLimit(walletPostRateLimit(), 'u1').catch((caught: unknown) => caught);
    const problem = toProblem(error, '/accounts/me/wallet/nonce');
    expect(problem.status).toBe(503);
    expect(problem.headers['retry-after']).toBe(String(unavailableRetryAfterSeconds));
  });
});
