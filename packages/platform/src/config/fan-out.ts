import * as z from '../schema';
import { wholeNumber } from './fields';

/** How the listener broadcasts; it reads the whole configuration (config.ts), so this group has no reader of its own. */
export const fanOutSchema = z.object({
  /** The fan-out function the listener hands large broadcasts to, shard by shard; without it the listener posts every shard itself. */
  FANOUT_FUNCTION_NAME: z.optional(z.string().check(z.minLength(1))),
  /**
   * The fan-out budget: PostToConnection calls a second for every post together (the listener's and every shard's), a
   * tenth of it kept for forgeFulfilled. 5,000 by default, half of API Gateway's default throttle per account and Region
   * (10,000 a second), which every HTTP request and hub message spends too: the other half stays theirs. 0 sets no budget.
   */
  FANOUT_POSTS_PER_SECOND: wholeNumber(5_000),
  /**
   * The least time between two marketChanged broadcasts, whatever the market does: the cost ceiling. 1 s by default: at
   * most one broadcast a second (2.6 million messages per always-connected client-month) even on a chain of 250 ms blocks,
   * and clients still see a change well within the 5 s fallback read.
   */
  FANOUT_MIN_INTERVAL_MS: wholeNumber(1_000),
});
