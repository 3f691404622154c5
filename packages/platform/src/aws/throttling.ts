/**
 * The error names the SDK's retry counts as throttling (THROTTLING_ERROR_CODES
 * of @smithy/core, whose isThrottlingError a test holds this to). Not imported:
 * its module would add 13 KB to every read function, which never calls AWS but
 * traces its database calls with the same classification.
 */
const throttlingErrorNames = new Set([
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

/** What an AWS SDK v3 error carries about its answer; other errors (a database's, a socket's) carry none of it. */
interface AwsErrorShape {
  name?: unknown;
  message?: unknown;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
  $response?: { headers?: Record<string, string | undefined> };
}

export const awsErrorShape = (error: unknown): AwsErrorShape => (error !== null && typeof error === 'object' ? error : {});

/**
 * AWS refused the call for its rate: a 429, or what the SDK's retry counts as
 * throttling (DynamoDB's ProvisionedThroughputExceededException is a 400). The
 * one test of it: tracing records these as throttles, the fan-out's pacer
 * slows down on them.
 */
export function isThrottled(error: unknown): boolean {
  const { name, $metadata, $retryable } = awsErrorShape(error);
  return $metadata?.httpStatusCode === 429 || (typeof name === 'string' && throttlingErrorNames.has(name)) || $retryable?.throttling === true;
}

/** The wait a throttled answer asks for in `Retry-After` (seconds or an HTTP date), from the response the SDK's error carries. */
export function retryAfterMs(error: unknown, now = Date.now()): number | undefined {
  const value = awsErrorShape(error).$response?.headers?.['retry-after'];
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
