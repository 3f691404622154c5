import { freshnessSchema } from './indexer/freshness-schema';
import * as z from '@hatchery/platform/schema';

export const healthSchema = z.object({
  status: z.literal('ok'),
  database: z.literal('ok'),
  indexer: freshnessSchema.check(z.describe("How far the indexer has got on each chain, from Ponder's checkpoint; `unknown` without Ponder's tables.")),
});

export type Health = z.infer<typeof healthSchema>;
