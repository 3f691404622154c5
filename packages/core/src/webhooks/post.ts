import http from 'node:http';
import https from 'node:https';
import { ipLiteral, isPublicAddress, lookupPublicAddress, notPublic } from './address-policy';
import { longestRetryDelayMs } from './retry-schedule';

/** One attempt to deliver a webhook. */
export interface WebhookPost {
  url: string;
  /** The JSON the signature was computed over, sent byte for byte. */
  body: string;
  /** The signature's headers (`webhookHeaders`); the content type and length are added. */
  headers: Readonly<Record<string, string>>;
  /** True on the local stack only: the address is then not checked, and a private or loopback one is reached. */
  allowPrivate: boolean;
  /** The longest wait for the connection (and its TLS handshake). */
  connectTimeoutMs: number;
  /** The longest the whole attempt takes, from its start to the end of the answer. */
  timeoutMs: number;
  /** How much of the answer's body is read before the connection is closed; the body itself is never kept. */
  maxResponseBytes: number;
  /**
   * The agent whose sockets the attempt uses: one keep-alive agent per endpoint keeps each endpoint's connections its
   * own. Node's global agent, which keeps connections alive too, when none is given.
   */
  agent?: http.Agent | undefined;
}

/**
 * What became of an attempt. `delivered`: a 2xx answer. `refused`: any other answer, redirects included (none is
 * followed), with the wait a 429 or 503 asked for. `unknown`: the request may have reached the receiver (the
 * connection was open when it failed or timed out): a retry carries the same webhook-id. `unsent`: it surely did not
 * (no address, an address the policy refuses, no connection). A reason is a short text of the HTTP status or the
 * network error, never the answer's body.
 */
export type PostOutcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'refused'; status: number; retryAfterMs?: number; reason: string }
  | { kind: 'unknown'; reason: string }
  | { kind: 'unsent'; reason: string };

/** Sends one webhook and tells what became of it; it never throws, and logs nothing. */
export function postWebhook(post: WebhookPost): Promise<PostOutcome> {
  if (!URL.canParse(post.url)) return Promise.resolve({ kind: 'unsent', reason: 'the URL is not a URL' });
  const url = new URL(post.url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.resolve({ kind: 'unsent', reason: `${url.protocol} is not http: or https:` });
  // Node connects to an IP literal without calling a lookup, so the policy's lookup never sees one.
  const literal = ipLiteral(url);
  if (!post.allowPrivate && literal !== undefined && !isPublicAddress(literal)) return Promise.resolve({ kind: 'unsent', reason: notPublic(literal, literal) });

  return new Promise((resolve) => {
    let connected = false;
    let answered: PostOutcome | undefined;
    const settle = (outcome: PostOutcome) => {
      clearTimeout(connectTimer);
      clearTimeout(totalTimer);
      resolve(outcome);
    };
    const fail = (reason: string) => settle(answered ?? (connected ? { kind: 'unknown', reason } : { kind: 'unsent', reason }));

    let request: http.ClientRequest;
    try {
      request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers: { ...post.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(post.body) },
        agent: post.agent,
        lookup: post.allowPrivate ? undefined : lookupPublicAddress,
      });
    } catch (error) {
      return resolve({ kind: 'unsent', reason: describe(error) });
    }
    const connectTimer = setTimeout(() => {
      fail(`no connection within ${post.connectTimeoutMs} ms`);
      request.destroy();
    }, post.connectTimeoutMs);
    const totalTimer = setTimeout(() => {
      fail(`no answer within ${post.timeoutMs} ms`);
      request.destroy();
    }, post.timeoutMs);
    const onConnected = () => {
      connected = true;
      clearTimeout(connectTimer);
    };

    request.on('socket', (socket) => {
      if (request.reusedSocket) onConnected();
      else socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', onConnected);
    });
    request.on('error', (error) => fail(describe(error)));
    request.on('response', (response) => {
      answered = outcomeOf(response);
      const done = () => settle(answered!);
      // A socket goes back to the agent's pool only once its answer is read to the end; a long answer's is closed.
      if (Number(response.headers['content-length']) > post.maxResponseBytes) {
        response.destroy();
        return done();
      }
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > post.maxResponseBytes) {
          response.destroy();
          done();
        }
      });
      response.on('end', done);
      response.on('error', done);
      response.on('close', done);
    });
    request.end(post.body);
  });
}

function outcomeOf(response: http.IncomingMessage): PostOutcome {
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  const text = `HTTP ${status} ${http.STATUS_CODES[status] ?? ''}`.trim();
  const reason = status >= 300 && status < 400 ? `${text}: redirects are not followed` : text;
  const retryAfterMs = status === 429 || status === 503 ? retryAfter(response.headers['retry-after']) : undefined;
  return retryAfterMs === undefined ? { kind: 'refused', status, reason } : { kind: 'refused', status, retryAfterMs, reason };
}

/** A `Retry-After` header's wait, in seconds or until an HTTP date, at most the longest wait between attempts. */
function retryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1_000 : Date.parse(trimmed) - Date.now();
  return Number.isNaN(ms) ? undefined : Math.min(longestRetryDelayMs, Math.max(0, ms));
}

function describe(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}
