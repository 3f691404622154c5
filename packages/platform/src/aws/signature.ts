import { createHmac, hash } from 'node:crypto';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** What is signed of a request: its method, host (with the port, as sent), path as sent (no query), lowercase headers and body. */
export interface SignableRequest {
  method: string;
  host: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  body: string | Uint8Array;
}

/** Headers left unsigned, as the SDK's signer leaves them (with proxy-* and sec-*): a proxy may add, drop or change them on the way. */
const unsignedHeaders = new Set([
  'authorization',
  'cache-control',
  'connection',
  'expect',
  'from',
  'keep-alive',
  'max-forwards',
  'pragma',
  'referer',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);

const isSigned = (name: string) => !unsignedHeaders.has(name) && !name.startsWith('proxy-') && !name.startsWith('sec-');

/** A header's value as signed: line breaks as spaces, runs of spaces and tabs as one, no space at either end. */
const canonicalValue = (value: string) => value.replace(/[\r\n]/g, ' ').replace(/[ \t]+/g, ' ').replace(/^ | $/g, '');

const sha256 = (data: string | Uint8Array) => hash('sha256', data, 'hex');

/** RFC 3986 escaping, as SigV4 and the SDK's path parameters want it: encodeURIComponent leaves !'()* as they are. */
export const escapeUri = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The canonical URI of a service other than S3: the path as sent, its `.` and
 * `..` segments resolved and empty ones dropped, then escaped once more
 * segment by segment (so `%3D` in a connection id is signed as `%253D`).
 */
export function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(escapeUri(segment));
  }
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : '';
  return `/${segments.join('/')}${trailing}`;
}

/** Derived signing keys: one a day per secret, region and service, so a process holds a handful. */
const signingKeys = new Map<string, Buffer>();

function signingKey(secretAccessKey: string, day: string, region: string, service: string): Buffer {
  const cacheKey = `${secretAccessKey}\n${day}\n${region}\n${service}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    key = createHmac('sha256', `AWS4${secretAccessKey}`).update(day).digest();
    for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
    // A long-running process crosses days and may see its credentials rotate: yesterday's keys are of no use.
    if (signingKeys.size >= 16) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
}

/**
 * AWS Signature Version 4 for a request without a query string: the headers
 * to send, the request's own plus host, x-amz-date, the session token when
 * there is one, and authorization. Every header but the unsigned ones is signed.
 */
export function signRequest(
  request: SignableRequest,
  scope: { region: string; service: string },
  credentials: Credentials,
  now: Date = new Date(),
): Record<string, string> {
  const amzDate = now.toISOString().replace(/[:-]|\.\d{3}/g, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = { ...request.headers, host: request.host, 'x-amz-date': amzDate };
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  const signed = Object.keys(headers).filter(isSigned).sort();
  const canonicalHeaders = signed.map((name) => `${name}:${canonicalValue(headers[name]!)}\n`).join('');
  const signedHeaders = signed.join(';');
  const canonicalRequest = `${request.method}\n${canonicalPath(request.path)}\n\n${canonicalHeaders}\n${signedHeaders}\n${sha256(request.body)}`;
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${credentialScope}\n${sha256(canonicalRequest)}`;
  const signature = createHmac('sha256', signingKey(credentials.secretAccessKey, day, scope.region, scope.service)).update(stringToSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}
