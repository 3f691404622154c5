import { LambdaClient } from '@aws-sdk/client-lambda';
import { awsSettings } from '../config/aws';
import { keepAliveHandler } from './http';
import { DeadlineRetryStrategy } from './retry';
import { traceCalls } from './traced';

/**
 * The Lambda API's settings, for the listener's synchronous invokes of the
 * fan-out function. An invoke whose shard may have started posting, sent
 * again, would post the shard twice: retried only when Lambda refused it
 * (throttled) or never saw it, as the management API's posts are.
 */
export const lambdaSettings = {
  /** The SDK's default for this client, and its backoff base. */
  maxAttempts: 3,
  baseDelayMs: 50,
  connectionTimeoutMs: 300,
  /** Past the invoked function's own timeout, Lambda answers with its timeout error within this. */
  answerMarginMs: 5_000,
  /** Room after one whole invoke for the retry of a throttled one (its wait of up to 1 s, and Lambda's answer). */
  retryMarginMs: 3_000,
  /** A broadcast hands all its shards out at once (core's connectionShards). */
  maxSockets: 16,
  atMostOnce: true,
} as const;

/**
 * A Lambda client for invokes of a function whose timeout is
 * `invocationTimeoutMs`, at LAMBDA_ENDPOINT when set (the local stack's Lambda
 * API); credentials from the SDK's default chain (the Fargate task role's).
 */
export function lambdaClient({
  endpoint = awsSettings().LAMBDA_ENDPOINT,
  invocationTimeoutMs,
}: {
  endpoint?: string;
  invocationTimeoutMs: number;
}): LambdaClient {
  const { maxAttempts, answerMarginMs, retryMarginMs } = lambdaSettings;
  const requestTimeoutMs = invocationTimeoutMs + answerMarginMs;
  const client = new LambdaClient({
    region: awsSettings().AWS_REGION,
    endpoint,
    requestHandler: keepAliveHandler({ ...lambdaSettings, requestTimeoutMs }),
    maxAttempts,
    retryStrategy: new DeadlineRetryStrategy({ ...lambdaSettings, attemptTimeoutMs: requestTimeoutMs, deadlineMs: requestTimeoutMs + retryMarginMs }),
  });
  traceCalls(client, 'Lambda');
  return client;
}
