import type { Context } from 'aws-lambda';

/**
 * The fan-out function in a runner whose timeout comes sooner than the
 * function was told (a frozen or crashed instance looks the same from
 * outside): the handler believes it has 30 s more than it has, so the local
 * Lambda service's timeout cuts it off mid-shard, and the listener's retry
 * must carry on without posting anyone the frame twice.
 */
export const handler = async (event: unknown, context: Context) => {
  // Imported here: the test imports nothing of this file, and the handler's logger is made after the stack sets LOG_LEVEL.
  const { handler: fanOut } = await import('@hatchery/functions/fanout/shard');
  return fanOut(event, { ...context, getRemainingTimeInMillis: () => context.getRemainingTimeInMillis() + 30_000 });
};
