import type { RetryErrorInfo } from '@smithy/types';
import { describe, expect, it, vi } from 'vitest';
import { deliveryDeadlines, shardStopAt } from '@hatchery/platform/aws/deadlines';
import { dynamoCallers, dynamoSettings } from '@hatchery/platform/aws/dynamo';
import { lambdaSettings } from '@hatchery/platform/aws/lambda';
import { managementSettings } from '@hatchery/platform/aws/management';
import { longestWaitMs } from '@hatchery/platform/aws/retry';
import { shardClaimLifetimeMs } from '@hatchery/core/realtime/ledger';
import { functionTimeoutSeconds } from '@hatchery/functions/function-timeouts';
import { shardDeadline } from '@hatchery/listener/shards';
import { forgeEventWaitMs } from '../../../packages/client/src/events';

/**
 * The hub's delivery deadlines (platform/aws/deadlines.ts) hold together, read
 * where they take effect: the clients' settings, the fan-out function's
 * timeout, the listener's shard stop. test/network/aws/stalled-answers.test.ts
 * holds the clients to their deadlines against a server that stalls.
 */

/** The calls a shard may start until its stop: posts and closes, and DynamoDB's on the hub's records (claims, removals). */
const shardCalls = {
  management: managementSettings,
  records: { ...dynamoSettings, ...dynamoCallers.records },
};

const throttled = { errorType: 'THROTTLING' } as RetryErrorInfo;

describe('the hub’s delivery deadlines', () => {
  const timeoutMs = functionTimeoutSeconds.fanOut * 1000;
  /** From a shard's stop to its function's timeout. */
  const stopMarginMs = timeoutMs - shardStopAt(timeoutMs, 0);

  it('the fan-out function’s timeout is the shard’s, in whole seconds as Lambda takes it', () => {
    expect(Number.isInteger(functionTimeoutSeconds.fanOut)).toBe(true);
    expect(timeoutMs).toBe(deliveryDeadlines.shardTimeoutMs);
  });

  it('a shard stops after it starts and before the function’s timeout, in the listener as in the function', () => {
    const startedAt = 1_000_000;
    const stop = shardStopAt(timeoutMs, startedAt);
    expect(stop).toBeGreaterThan(startedAt);
    expect(stop).toBeLessThan(startedAt + timeoutMs);
    vi.useFakeTimers({ toFake: ['Date'], now: startedAt });
    try {
      expect(shardDeadline()).toBe(stop);
    } finally {
      vi.useRealTimers();
    }
  });

  it.each(Object.entries(shardCalls))('%s: a call started just before the shard’s stop ends, its retries included, by the function’s timeout', (_, call) => {
    expect(call.deadlineMs).toBeLessThanOrEqual(stopMarginMs);
  });

  it.each(Object.entries(shardCalls))('%s: one whole attempt fits the call’s deadline, and so does the retry of one throttled at once', (_, call) => {
    expect(call.requestTimeoutMs).toBeLessThanOrEqual(call.deadlineMs);
    expect(longestWaitMs(throttled, 0, call.baseDelayMs) + call.requestTimeoutMs).toBeLessThanOrEqual(call.deadlineMs);
  });

  it('every retry of a shard invocation, each as long as the listener waits for one, finds the claims of those before it', () => {
    const invokeDeadlineMs = deliveryDeadlines.shardTimeoutMs + lambdaSettings.answerMarginMs + lambdaSettings.retryMarginMs;
    expect((deliveryDeadlines.shardRetries + 1) * invokeDeadlineMs).toBeLessThan(shardClaimLifetimeMs);
  });

  it('the listener stops trying a forgeFulfilled post no later than the buyer’s client stops waiting for it', () => {
    expect(deliveryDeadlines.targetedMs).toBeLessThanOrEqual(forgeEventWaitMs);
  });
});
