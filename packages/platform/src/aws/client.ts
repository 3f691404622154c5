import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { signRequest, type Credentials } from './signature';

/**
 * A small AWS API client: signed (SigV4) requests over Node's own HTTP, on
 * keep-alive sockets, retried as the SDK's standard retry mode does. The
 * functions call two AWS APIs (DynamoDB, API Gateway's management API), and
 * the SDK's clients for them were more than half of each function's bundle.
 */

export type CredentialsProvider = () => Credentials | Promise<Credentials>;

/** Lambda hands a function its role's credentials in the environment; the local stack sets the same variables. */
export const environmentCredentials: CredentialsProvider = () => {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = process.env;
  if (!accessKeyId || !secretAccessKey) throw new AwsError('CredentialsProviderError', 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set.');
  return { accessKeyId, secretAccessKey, sessionToken: sessionToken || undefined };
};

let processCredentials: CredentialsProvider = environmentCredentials;

/**
 * Where every client of this process gets its credentials, unless given its
 * own: the environment, or what a long-running task (the listener, whose
 * Fargate role's credentials come from the container endpoint and expire) sets once at start.
 */
export function useCredentials(provider: CredentialsProvider): void {
  processCredentials = provider;
}

/** The retries of the SDK's standard mode, which the SDK clients had (maxAttempts 3). */
export const retryPolicy = {
  attempts: 3,
  /** Full jitter: a retry waits a random time up to base × 2^(retry - 1), capped. */
  baseDelayMs: 50,
  throttlingBaseDelayMs: 1_000,
  maxDelayMs: 20_000,
  /** One attempt's bound, connecting included: far above either API's latency, and three fit a hub function's 10 s. */
  attemptTimeoutMs: 3_000,
} as const;

/** Error names that mean "slow down" (the SDK's list): retried after the longer delay. */
const throttlingErrors = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);
const transientErrors = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const transientStatuses = new Set([500, 502, 503, 504]);
/** A socket that failed or was closed under a request (a kept-alive one the server had dropped, say). */
const networkErrorCodes = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);

/** An error an AWS API answered: `name` is its error type (ConditionalCheckFailedException, GoneException, …), as the SDK names its errors. */
export class AwsError extends Error {
  constructor(
    name: string,
    message: string,
    readonly statusCode?: number,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = name;
  }
}

function retryKind(error: unknown): 'throttling' | 'transient' | undefined {
  const { name, code, statusCode } = error as { name?: string; code?: string; statusCode?: number };
  if (statusCode === 429 || (name !== undefined && throttlingErrors.has(name))) return 'throttling';
  if ((name !== undefined && transientErrors.has(name)) || (code !== undefined && networkErrorCodes.has(code))) return 'transient';
  if (statusCode !== undefined && transientStatuses.has(statusCode)) return 'transient';
  return undefined;
}

/** The wait before retry `retry` (1 for the first retry). */
export function retryDelayMs(retry: number, kind: 'throttling' | 'transient', random: () => number = Math.random): number {
  const base = kind === 'throttling' ? retryPolicy.throttlingBaseDelayMs : retryPolicy.baseDelayMs;
  return Math.floor(random() * Math.min(base * 2 ** (retry - 1), retryPolicy.maxDelayMs));
}

/**
 * The error of a failed response. Both protocols (DynamoDB's JSON 1.0 and the
 * management API's REST JSON) name the error in `x-amzn-errortype` or the
 * body's `__type`/`code`, possibly prefixed by a namespace (`…#Name`) or
 * followed by a `:` suffix; the message is the body's `message` or `Message`.
 */
export function responseError(statusCode: number, headers: IncomingHttpHeaders, body: Buffer): AwsError {
  let parsed: { __type?: unknown; code?: unknown; message?: unknown; Message?: unknown } = {};
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    // Not JSON (a proxy's page, say): the status names the error.
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const type = text(headers['x-amzn-errortype']) ?? text(parsed.code) ?? text(parsed.__type);
  const name = type?.split(':')[0]!.split('#').at(-1) || String(statusCode);
  const message = text(parsed.message) ?? text(parsed.Message) ?? `${name} (HTTP ${statusCode})`;
  const requestId = headers['x-amzn-requestid'] ?? headers['x-amz-request-id'];
  return new AwsError(name, message, statusCode, typeof requestId === 'string' ? requestId : undefined);
}

export interface AwsRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below the endpoint's own path, escaped as it is to be sent. */
  path: string;
  /** Lowercase names. */
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface AwsResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface AwsClientOptions {
  /** The signing name: `dynamodb`, `execute-api`. */
  service: string;
  region: string;
  /** Its base URL, a path included (the management API's stage). */
  endpoint: string;
  /** Sockets open at once (each kept alive for the next request). */
  maxSockets?: number;
  credentials?: CredentialsProvider;
  attemptTimeoutMs?: number;
}

const empty = Buffer.alloc(0);

/** One service at one endpoint, with a socket pool of its own. */
export class AwsClient {
  readonly service: string;
  readonly region: string;
  private readonly url: URL;
  private readonly basePath: string;
  private readonly agent: HttpAgent;
  private readonly request: typeof httpRequest;
  private readonly credentials: CredentialsProvider | undefined;
  private readonly attemptTimeoutMs: number;

  constructor(options: AwsClientOptions) {
    this.service = options.service;
    this.region = options.region;
    this.url = new URL(options.endpoint);
    this.basePath = this.url.pathname.replace(/\/+$/, '');
    const https = this.url.protocol === 'https:';
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 50 };
    this.agent = https ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
    this.request = https ? httpsRequest : httpRequest;
    this.credentials = options.credentials;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? retryPolicy.attemptTimeoutMs;
  }

  /** The response of a 2xx answer; anything else throws, an AwsError when the service answered, after the retries it deserves. */
  async send(request: AwsRequest): Promise<AwsResponse> {
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await this.attempt(request);
        if (response.statusCode >= 200 && response.statusCode < 300) return response;
        throw responseError(response.statusCode, response.headers, response.body);
      } catch (error) {
        const kind = retryKind(error);
        if (!kind || attempt >= retryPolicy.attempts) throw error;
        await sleep(retryDelayMs(attempt, kind));
      }
    }
  }

  /** Stops keeping sockets open (a test's own client, at its end). */
  destroy(): void {
    this.agent.destroy();
  }

  private async attempt({ method, path, headers = {}, body = empty }: AwsRequest): Promise<AwsResponse> {
    const fullPath = this.basePath + path;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const signed = signRequest(
      { method, host: this.url.host, path: fullPath, headers: { ...headers, 'content-length': String(bytes.byteLength) }, body: bytes },
      this,
      await (this.credentials ?? processCredentials)(),
    );
    return new Promise<AwsResponse>((resolve, reject) => {
      const outgoing = this.request(
        { protocol: this.url.protocol, hostname: this.url.hostname, port: this.url.port, method, path: fullPath, headers: signed, agent: this.agent },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.once('end', () => {
            clearTimeout(timer);
            resolve({ statusCode: incoming.statusCode ?? 0, headers: incoming.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
          });
          incoming.once('error', fail);
        },
      );
      function fail(error: Error) {
        clearTimeout(timer);
        reject(error);
      }
      const timer = setTimeout(
        () => outgoing.destroy(new AwsError('TimeoutError', `No answer from ${this.service} within ${this.attemptTimeoutMs} ms.`)),
        this.attemptTimeoutMs,
      );
      outgoing.once('error', fail);
      outgoing.end(bytes);
    });
  }
}
