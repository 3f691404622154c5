import { AppError } from '../errors';
import { accountsSettings } from '@hatchery/platform/config/accounts';
import { UpdateCommand, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '@hatchery/platform/aws/dynamo';
import { tableDefinition } from '@hatchery/platform/aws/table';
import { logger } from '@hatchery/platform/telemetry/logger';

export interface RateLimitRule {
  /** Part of the counter's key, so rules never share counters. */
  name: string;
  limit: number;
  windowMs: number;
}

/** The two wallet-link POSTs share one counter per account, `WALLET_POSTS_PER_MINUTE` a minute. */
export const walletPostRateLimit = (): RateLimitRule => ({ name: 'wallet-post', limit: accountsSettings().WALLET_POSTS_PER_MINUTE, windowMs: 60_000 });

type RateDecision = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

/** The fixed window `now` falls in: its start and end, epoch milliseconds. */
function windowAt(now: number, windowMs: number): { start: number; end: number } {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, end: start + windowMs };
}

function decide(count: number, rule: RateLimitRule, now: number): RateDecision {
  if (count <= rule.limit) return { allowed: true, remaining: rule.limit - count };
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowAt(now, rule.windowMs).end - now) / 1000)) };
}

/**
 * Counts one request of `subject` against `rule`: one atomic ADD on the
 * window's item in the service's table, so every instance shares the count;
 * the item expires (TTL) a window after its own ends.
 */
export async function hitRateLimit(rule: RateLimitRule, subject: string, now = Date.now()): Promise<RateDecision> {
  const window = windowAt(now, rule.windowMs);
  const { partitionKey, sortKey, ttlAttribute } = tableDefinition;
  let result: UpdateCommandOutput;
  try {
    // The 'counter' client re-sends only what DynamoDB refused or never saw: a re-sent ADD would count twice.
    result = await dynamo('counter').send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { [partitionKey.name]: `ratelimit#${rule.name}#${subject}`, [sortKey.name]: String(window.start) },
        UpdateExpression: 'ADD #hits :one SET #expiresAt = :expiresAt',
        ExpressionAttributeNames: { '#hits': 'hits', '#expiresAt': ttlAttribute },
        ExpressionAttributeValues: { ':one': 1, ':expiresAt': Math.ceil((window.end + rule.windowMs) / 1000) },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
  } catch (error) {
    logger().error({ err: error }, 'rate-limit counter update failed');
    // Without the shared counter the limit cannot be enforced; refuse rather than let requests through uncounted.
    throw new AppError('unavailable', 'The rate limiter is unavailable; try again shortly.');
  }
  return decide(Number(result.Attributes?.hits ?? 0), rule, now);
}
