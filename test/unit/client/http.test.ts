import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient, HatcheryProblem, retryAfterMs } from '../../../packages/client/src/index';

const problem = (status: number, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ title: 'Too Many Requests', status, detail: 'Slow down.', instance: '/editions' }), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });
const page = () =>
  new Response(JSON.stringify({ items: [], totalCount: 0, page: 1, pageSize: 20 }), { status: 200, headers: { 'content-type': 'application/json' } });

/** A fetch that answers from a script and records what it was asked. */
function scripted(...answers: Array<() => Response>) {
  const requests: Request[] = [];
  const fetch = vi.fn(async (input: string | URL | Request, init?: RequestInit) => {
    requests.push(new Request(input, init));
    const answer = answers.shift();
    if (!answer) throw new Error('no more answers');
    return answer();
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, requests };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('retries', () => {
  it('waits out Retry-After on a 429, then succeeds', async () => {
    const { fetch, requests } = scripted(() => problem(429, { 'retry-after': '2' }), page);
    const result = createClient({ baseUrl: 'http://api.test', fetch }).api.listEditions({ pageSize: 5 });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toMatchObject({ items: [], totalCount: 0 });
    expect(requests).toHaveLength(2);
    expect(new URL(requests[1]!.url).search).toBe('?pageSize=5');
  });

  it('waits out an HTTP-date Retry-After on a 503 for a GET', async () => {
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const { fetch, requests } = scripted(() => problem(503, { 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), page);
    const result = createClient({ baseUrl: 'http://api.test', fetch }).api.getSummary();
    await vi.advanceTimersByTimeAsync(2_999);
    expect(requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await result;
    expect(requests).toHaveLength(2);
  });

  it('backs off 1 s, 2 s, 4 s without Retry-After and throws the last problem after the retries', async () => {
    const { fetch, requests } = scripted(...Array.from({ length: 4 }, () => () => problem(503)));
    const result = createClient({ baseUrl: 'http://api.test', fetch })
      .api.listSales()
      .catch((error: unknown) => error);
    for (const [wait, calls] of [
      [999, 1],
      [1, 2],
      [2_000, 3],
      [4_000, 4],
    ] as const) {
      await vi.advanceTimersByTimeAsync(wait);
      expect(requests).toHaveLength(calls);
    }
    const error = await result;
    expect(error).toBeInstanceOf(HatcheryProblem);
    expect(error).toMatchObject({ status: 503, title: 'Too Many Requests', detail: 'Slow down.', instance: '/editions' });
  });

  it('does not repeat a POST that met a 503 (it may have committed)', async () => {
    const { fetch, requests } = scripted(() => problem(503, { 'retry-after': '1' }));
    const client = createClient({ baseUrl: 'http://api.test', fetch, getToken: () => 'token' });
    await expect(client.api.linkWallet({ address: `0x${'1'.repeat(40)}`, signature: `0x${'2'.repeat(130)}` })).rejects.toMatchObject({
      status: 503,
      retryAfterMs: 1_000,
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer token');
    expect(await requests[0]!.json()).toEqual({ address: `0x${'1'.repeat(40)}`, signature: `0x${'2'.repeat(130)}` });
  });

  it('repeats a POST that met a 429 (refused before anything happened)', async () => {
    const { fetch, requests } = scripted(
      () => problem(429, { 'retry-after': '1' }),
      () => new Response('{"message":"m","nonce":"n","expiresAt":"e"}'),
    );
    const result = createClient({ baseUrl: 'http://api.test', fetch, getToken: async () => 'token' }).api.requestWalletNonce();
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(result).resolves.toEqual({ message: 'm', nonce: 'n', expiresAt: 'e' });
    expect(requests.map((request) => request.method)).toEqual(['POST', 'POST']);
  });

  it('throws at once when Retry-After is beyond maxDelayMs, with the wait on the problem', async () => {
    const { fetch, requests } = scripted(() => problem(429, { 'retry-after': '60' }));
    const client = createClient({ baseUrl: 'http://api.test', fetch, retry: { maxDelayMs: 10_000 } });
    await expect(client.api.listListings()).rejects.toMatchObject({ status: 429, retryAfterMs: 60_000 });
    expect(requests).toHaveLength(1);
  });

  it('never retries other statuses, and reads per-field errors', async () => {
    const body = {
      title: 'Unprocessable',
      status: 422,
      detail: 'One or more fields are invalid.',
      instance: '/editions',
      errors: { filter: ["'nope' is not a filterable field"] },
    };
    const { fetch, requests } = scripted(() => new Response(JSON.stringify(body), { status: 422 }));
    const error = await createClient({ baseUrl: 'http://api.test/', fetch })
      .api.listEditions({ filter: 'nope=1' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HatcheryProblem);
    expect((error as HatcheryProblem).errors).toEqual(body.errors);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).toBe('http://api.test/editions?filter=nope%3D1');
  });
});

describe('Retry-After', () => {
  it('reads seconds and HTTP dates', () => {
    expect(retryAfterMs('5')).toBe(5_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', Date.parse('2026-01-01T00:00:00Z'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe('paths and inputs', () => {
  it('puts path parameters in the path, encodes builders and numbers, and sends no token to public routes', async () => {
    const { fetch, requests } = scripted(page);
    const client = createClient({ baseUrl: 'http://api.test', fetch, getToken: () => 'token' });
    await client.api.listAccountNfts({
      address: `0x${'a'.repeat(40)}`,
      page: 2,
      filter: (f) => f.staked.eq(true).and(f.editionName.contains('a,b')),
      orderBy: (f) => f.rarity.desc(),
    });
    const url = new URL(requests[0]!.url);
    expect(url.pathname).toBe(`/accounts/0x${'a'.repeat(40)}/nfts`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ page: '2', filter: 'staked=true,editionName=*a\\,b', orderBy: 'rarity desc' });
    expect(requests[0]!.headers.get('authorization')).toBeNull();
    // Revalidated with the server every time (a 304 when the ETag still matches), never a browser's stale copy.
    expect(requests[0]!.cache).toBe('no-cache');
  });
});
