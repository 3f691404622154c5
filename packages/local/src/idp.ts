import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { issuerFor } from '@hatchery/core/accounts/identity';

/**
 * The local identity provider: an RS256 key pair kept in the data folder (so
 * tokens outlive restarts and `npm run token` can sign without the stack),
 * its JWKS, and tokens shaped like Firebase/Google securetoken ones.
 */
export interface LocalIdentityProvider {
  projectId: string;
  issuer: string;
  jwks: { keys: JWK[] };
  signToken(claims: TokenClaims, options?: { expiresInSeconds?: number }): Promise<string>;
}

interface TokenClaims {
  uid: string;
  email?: string;
  name?: string;
}

const kid = 'hatchery-local-1';

async function loadOrCreateKey(keyFile: string, create: boolean): Promise<JWK> {
  try {
    return JSON.parse(await readFile(keyFile, 'utf8')) as JWK;
  } catch (error) {
    if (!create) throw new Error(`the identity provider's key ${keyFile} cannot be read (${(error as Error).message})`);
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
    await mkdir(dirname(keyFile), { recursive: true });
    await writeFile(keyFile, JSON.stringify(jwk), { mode: 0o600 });
    return jwk;
  }
}

export async function localIdentityProvider(options: {
  keyFile: string;
  projectId: string;
  /** Make a key when the file has none (the stack); false for tools that must sign with the running stack's key. */
  create?: boolean;
}): Promise<LocalIdentityProvider> {
  const privateJwk = await loadOrCreateKey(options.keyFile, options.create ?? true);
  const { kty, n, e } = privateJwk;
  const publicJwk: JWK = { kty, n, e, kid: privateJwk.kid, alg: 'RS256', use: 'sig' };
  const key = await importJWK(privateJwk, 'RS256');
  const tokenIssuer = issuerFor(options.projectId);
  return {
    projectId: options.projectId,
    issuer: tokenIssuer,
    jwks: { keys: [publicJwk] },
    signToken: ({ uid, email, name }, { expiresInSeconds = 3600 } = {}) =>
      new SignJWT({
        user_id: uid,
        ...(email !== undefined && { email }),
        ...(name !== undefined && { name }),
        email_verified: true,
        auth_time: Math.floor(Date.now() / 1000),
      })
        .setProtectedHeader({ alg: 'RS256', kid: privateJwk.kid ?? kid, typ: 'JWT' })
        .setIssuer(tokenIssuer)
        .setAudience(options.projectId)
        .setSubject(uid)
        .setIssuedAt()
        .setExpirationTime(`${expiresInSeconds}s`)
        .sign(key),
  };
}
