import type { Context } from 'aws-lambda';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '@hatchery/platform/aws/dynamo';
import { shardJobSchema } from '@hatchery/core/realtime/fan-out';

/** The marker that makes the next invocation for a shard fail once (the test puts it; whichever worker runs that invocation takes it). */
export const failOnce = (shard: number) => ({ pk: 'test#fail-once', sk: String(shard) });

/**
 * The fan-out function behind a failure a Lambda invocation can meet before
 * its handler does anything (a crashed or throttled instance): the first
 * invocation of a marked shard throws, any other runs the real handler.
 */
export const handler = async (event: unknown, context: Context) => {
  const { shard } = shardJobSchema.parse(event);
  const taken = await dynamo()
    .send(new DeleteCommand({ TableName: tableName(), Key: failOnce(shard), ConditionExpression: 'attribute_exists(pk)' }))
    .then(
      () => true,
      (error: { name?: string }) => {
        if (error.name === 'ConditionalCheckFailedException') return false;
        throw error;
      },
    );
  if (taken) throw new Error(`injected failure of shard ${shard}`);
  // Imported here, not above: the test imports this file for `failOnce` and must not create the handler's logger before its stack sets LOG_LEVEL.
  const { handler: fanOut } = await import('@hatchery/functions/fanout/shard');
  return fanOut(event, context);
};
