import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { NodeHttpHandler } from '@smithy/node-http-handler';
import { awsSettings } from '../config/aws';
import { deliveryDeadlines } from './deadlines';
import { keepAliveHandler } from './http';
import { DeadlineRetryStrategy } from './retry';
import { traceCalls } from './traced';

/**
 * DynamoDB's settings. The SDK gives DynamoDB 4 attempts and a 25 ms backoff
 * base (client-dynamodb's DynamoDBClient, under @smithy/core's Retry.v2026);
 * they are kept. An attempt is bounded far above DynamoDB's single-digit
 * milliseconds, low enough that a retry still fits the callers' deadlines.
 */
export const dynamoSettings = {
  maxAttempts: 4,
  baseDelayMs: 25,
  /** DNS and TCP to a regional endpoint take a few milliseconds; a connection not made in 300 is not coming. */
  connectionTimeoutMs: 300,
  /** Fifty times DynamoDB's usual latency, TLS included; half a second leaves room for a throttled retry within 2 s. */
  requestTimeoutMs: 500,
  /** One function invocation makes one call at a time and the listener a few: 50 (the SDK's own) never makes a call wait. */
  maxSockets: 50,
} as const;

/** How a caller's calls may be retried, and the deadline of one call, retries included. */
export const dynamoCallers = {
  /**
   * The hub's connection records, the delivery ledger and the listener's
   * state: reads and idempotent writes, retried whatever failed. A hub
   * function's few calls fit its 10 s.
   */
  records: { deadlineMs: deliveryDeadlines.recordsCallMs, atMostOnce: false },
  /**
   * The rate limiter's ADD counts twice if re-sent after it took effect, so
   * it is retried only when DynamoDB refused it (throttled) or never saw it.
   * 8 s lets a throttled call have its 4 attempts (waits of up to 1, 2 and 4 s)
   * and leaves an account function 7 s of its 15 for its database work (5 s at most).
   */
  counter: { deadlineMs: 8_000, atMostOnce: true },
} as const;
type DynamoCaller = keyof typeof dynamoCallers;

/** A document client (items as plain values) for one caller's calls; `handler` lets clients share one socket pool. */
export function dynamoClient(options: { endpoint?: string; region?: string; caller?: DynamoCaller; handler?: NodeHttpHandler } = {}): DynamoDBDocumentClient {
  const { maxAttempts, baseDelayMs, requestTimeoutMs } = dynamoSettings;
  const client = new DynamoDBClient({
    region: options.region ?? awsSettings().AWS_REGION,
    endpoint: options.endpoint,
    requestHandler: options.handler ?? keepAliveHandler(dynamoSettings),
    maxAttempts,
    retryStrategy: new DeadlineRetryStrategy({ maxAttempts, baseDelayMs, attemptTimeoutMs: requestTimeoutMs, ...dynamoCallers[options.caller ?? 'records'] }),
  });
  traceCalls(client, 'DynamoDB');
  return DynamoDBDocumentClient.from(client);
}

let handler: NodeHttpHandler | undefined;
const clients = new Map<DynamoCaller, DynamoDBDocumentClient>();

/** The process's DynamoDB client for `caller`, pointed at DYNAMODB_ENDPOINT when set (dynalite locally); all share one socket pool. */
export function dynamo(caller: DynamoCaller = 'records'): DynamoDBDocumentClient {
  let client = clients.get(caller);
  if (!client) {
    handler ??= keepAliveHandler(dynamoSettings);
    client = dynamoClient({ endpoint: awsSettings().DYNAMODB_ENDPOINT, caller, handler });
    clients.set(caller, client);
  }
  return client;
}

export const tableName = () => awsSettings().DYNAMODB_TABLE;
