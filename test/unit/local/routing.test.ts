import { describe, expect, it } from 'vitest';
import type { HttpRoute } from '@hatchery/functions/routes';
import { createRouter } from '@hatchery/local/gateway/routing';

const route = (method: string, path: string) => ({ method, path, handler: `${method} ${path}` }) as unknown as HttpRoute;

const router = createRouter([
  route('ANY', '/{proxy+}'),
  route('OPTIONS', '/{proxy+}'),
  route('GET', '/accounts/{address}/nfts'),
  route('GET', '/accounts/me'),
  route('ANY', '/accounts/{address}'),
  route('POST', '/accounts/me/wallet'),
  route('ANY', '/health'),
  route('GET', '/items/{id}'),
]);

const picked = (method: string, path: string) => {
  const matched = router(method, path);
  return matched && { routeKey: matched.routeKey, pathParameters: matched.pathParameters };
};

describe("the local gateway's router (API Gateway's route selection)", () => {
  it('takes a path of literal segments over one with parameters, and parameters over a greedy tail', () => {
    expect(picked('GET', '/accounts/me')).toEqual({ routeKey: 'GET /accounts/me', pathParameters: undefined });
    expect(picked('GET', '/accounts/0xAbC/nfts')).toEqual({ routeKey: 'GET /accounts/{address}/nfts', pathParameters: { address: '0xAbC' } });
    expect(picked('GET', '/nowhere/at/all')).toEqual({ routeKey: 'ANY /{proxy+}', pathParameters: { proxy: 'nowhere/at/all' } });
  });

  it('takes an exact method over ANY, even where ANY names a more specific path', () => {
    expect(picked('OPTIONS', '/accounts/me')).toEqual({ routeKey: 'OPTIONS /{proxy+}', pathParameters: { proxy: 'accounts/me' } });
    expect(picked('DELETE', '/accounts/me')).toEqual({ routeKey: 'ANY /accounts/{address}', pathParameters: { address: 'me' } });
    expect(picked('GET', '/health')).toEqual({ routeKey: 'ANY /health', pathParameters: undefined });
  });

  it('matches a literal path exactly, and decodes parameters (keeping one that is not valid percent-encoding)', () => {
    expect(picked('POST', '/accounts/me/wallet/')).toEqual({ routeKey: 'ANY /{proxy+}', pathParameters: { proxy: 'accounts/me/wallet/' } });
    expect(picked('GET', '/items/a%20b')).toEqual({ routeKey: 'GET /items/{id}', pathParameters: { id: 'a b' } });
    expect(picked('GET', '/items/%E0%A4%A')).toEqual({ routeKey: 'GET /items/{id}', pathParameters: { id: '%E0%A4%A' } });
  });

  it('matches nothing where no route takes the method or the path', () => {
    const narrow = createRouter([route('GET', '/editions')]);
    expect(narrow('POST', '/editions')).toBeUndefined();
    expect(narrow('GET', '/editions/1')).toBeUndefined();
  });
});
