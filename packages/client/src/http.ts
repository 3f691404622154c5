import { rememberIndexedBlock } from './indexed-block.js';
import type { ProblemBody } from './route-types.js';
import { sleep } from './timing.js';

export type { ProblemBody };

/** A problem+json answer (RFC 9457), thrown for every non-2xx status. */
export class HatcheryProblem extends Error implements ProblemBody {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly instance: string;
  readonly type?: string;
  /** Per field, for 422. */
  readonly errors?: Record<string, string[]>;
  /** From `Retry-After`, when the answer carried one. */
  readonly retryAfterMs?: number;
  /** On a 409 of a read sent with `minBlock`: the block asked for and the block indexed, as `<chainId>:<block>` (`unknown` without a Ponder checkpoint). */
  readonly minBlock?: string;
  readonly indexedBlock?: string;

  constructor(body: ProblemBody & { minBlock?: unknown; indexedBlock?: unknown }, retryAfterMs?: number) {
    super(`${body.status} ${body.title}: ${body.detail}`);
    this.name = 'HatcheryProblem';
    this.status = body.status;
    this.title = body.title;
    this.detail = body.detail;
    this.instance = body.instance;
    if (body.type !== undefined) this.type = body.type;
    if (body.errors !== undefined) this.errors = body.errors;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
    if (typeof body.minBlock === 'string') this.minBlock = body.minBlock;
    if (typeof body.indexedBlock === 'string') this.indexedBlock = body.indexedBlock;
  }
}

export const isProblem = (error: unknown, status?: number): error is HatcheryProblem =>
  error instanceof HatcheryProblem && (status === undefined || error.status === status);

export interface RetryOptions {
  /** Retries after the first attempt. */
  retries?: number;
  /** A `Retry-After` longer than this is not waited for: the problem is thrown with its retryAfterMs. */
  maxDelayMs?: number;
}

export interface HttpOptions {
  /** Where the API is served, e.g. `https://api.example.com` (no trailing slash needed). */
  baseUrl: string;
  /** The identity provider's token for protected routes; Firebase's `user.getIdToken()` fits. */
  getToken?: () => string | null | undefined | Promise<string | null | undefined>;
  fetch?: typeof fetch;
  retry?: RetryOptions;
}

interface Call {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  auth: boolean;
  signal?: AbortSignal;
}

/** Seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A 429 was refused before anything happened, so any request may go again;
 * a 503 only where repeating is harmless (a POST may have committed); a 409
 * of a read whose minBlock is not indexed yet, once the index may have got there.
 */
const retriable = (problem: HatcheryProblem, method: string) =>
  problem.status === 429 ||
  (problem.status === 503 && (method === 'GET' || method === 'DELETE')) ||
  (problem.status === 409 && method === 'GET' && problem.minBlock !== undefined);

async function problemOf(response: Response, path: string): Promise<HatcheryProblem> {
  const text = await response.text();
  let body: Partial<ProblemBody> = {};
  try {
    body = JSON.parse(text) as Partial<ProblemBody>;
  } catch {
    // Not problem+json (a proxy's page, say): the status is all there is.
  }
  return new HatcheryProblem(
    { title: response.statusText, detail: text.slice(0, 200), instance: path, ...body, status: response.status },
    retryAfterMs(response.headers.get('retry-after')),
  );
}

export async function send(options: HttpOptions, call: Call): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (call.auth) {
    const token = await options.getToken?.();
    if (token) headers.authorization = `Bearer ${token}`;
  }
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const query = call.query && Object.keys(call.query).length ? `?${new URLSearchParams(call.query)}` : '';
  const url = `${options.baseUrl.replace(/\/+$/, '')}${call.path}${query}`;
  const { retries = 3, maxDelayMs = 10_000 } = options.retry ?? {};
  const fetcher = options.fetch ?? globalThis.fetch;
  // Node's RequestInit types leave out `cache`, which browsers and Node's fetch both take.
  const init: RequestInit & { cache: 'no-cache' } = {
    method: call.method,
    headers,
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
    // Public lists allow stale-while-revalidate: without this a browser answers a reload after marketChanged from its stale copy.
    cache: 'no-cache',
    signal: call.signal,
  };
  for (let attempt = 0; ; attempt++) {
    const response = await fetcher(url, init);
    if (response.ok) {
      if (response.status === 204) return undefined;
      const body: unknown = await response.json();
      rememberIndexedBlock(body, response.headers.get('x-indexed-block'));
      return body;
    }
    const problem = await problemOf(response, call.path);
    // Without Retry-After (a 503 from a proxy, say) the wait grows: 1 s, 2 s, 4 s.
    const delay = problem.retryAfterMs ?? 1000 * 2 ** attempt;
    if (attempt >= retries || !retriable(problem, call.method) || delay > maxDelayMs) throw problem;
    await sleep(delay, call.signal);
  }
}
