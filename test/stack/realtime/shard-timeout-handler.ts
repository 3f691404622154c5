import type { Context } from 'aws-lambda';
import { handler as fanOut } from '@hatchery/functions/fanout/shard';

/**
 * The fan-out function in a runner whose timeout comes sooner than the
 * function was told (a frozen or crashed instance looks the same from
 * outside): the handler believes it has 30 s more than it has, so the local
 * Lambda service's timeout cuts it off mid-shard, and the listener's retry
 * must carry on without posting anyone the frame twice. Only the local
 * stack's workers import this file, in the invocation's init, as Lambda
 * imports a function's module before its timeout starts.
 */
export const handler = async (event: unknown, context: Context) =>
  fanOut(event, { ...context, getRemainingTimeInMillis: () => context.getRemainingTimeInMillis() + 30_000 });
