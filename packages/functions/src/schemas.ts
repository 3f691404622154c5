import * as z from 'zod';
import { patterns } from '@hatchery/core/limits';

/**
 * A wallet of the local stack's demo data that owns unburned NFTs, staked
 * pairs and forge requests, and has an upline (test/local/demo-data.test.ts
 * checks it), so "Try it out" shows data at once.
 */
export const exampleWallet = '0x000000000000000000000000000000000000000b';

/** The path parameter of every `{address}` route. */
export const addressParams = z.object({
  address: z
    .string()
    .regex(patterns.address, 'must be 0x followed by 40 hex characters')
    .meta({ description: 'A wallet address: `0x` and 40 hex characters, any case.', examples: [exampleWallet] }),
});

/** The path parameter of the API explorer's files. */
export const docsAssetParams = z.object({
  asset: z.string().meta({ description: 'A file of the explorer.', examples: ['swagger-ui.css'] }),
});

export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    totalCount: z.number().int(),
    page: z.number().int(),
    pageSize: z.number().int(),
    nextCursor: z.string().optional().describe('While more rows follow: pass it as `after` for the next page (same filter and orderBy). Absent on the last page.'),
  });

export const problemSchema = z.object({
  type: z.string().optional(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  instance: z.string(),
  errors: z.record(z.string(), z.array(z.string())).optional(),
});
