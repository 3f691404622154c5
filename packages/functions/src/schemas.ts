import * as z from '@hatchery/platform/schema';
import { addressPattern } from '@hatchery/core/address';

/**
 * A wallet of the local stack's demo data that owns unburned NFTs, staked
 * pairs and forge requests, and has an upline (test/stack/local/demo-data.test.ts
 * checks it), so "Try it out" shows data at once.
 */
export const exampleWallet = '0x000000000000000000000000000000000000000b';

/** The path parameter of every `{address}` route. */
export const addressParams = z.object({
  address: z
    .string()
    .check(z.regex(addressPattern, 'must be 0x followed by 40 hex characters'))
    .register(z.globalRegistry, { description: 'A wallet address: `0x` and 40 hex characters, any case.', examples: [exampleWallet] }),
});

/** The path parameter of the API explorer's files. */
export const docsAssetParams = z.object({
  asset: z.string().register(z.globalRegistry, { description: 'A file of the explorer.', examples: ['swagger-ui.css'] }),
});

/** A paged list's envelope around `item`. */
/* @__NO_SIDE_EFFECTS__ */
export function pageSchema<T extends z.ZodMiniType>(item: T) {
  return z.object({
    items: z.array(item),
    totalCount: z.int(),
    page: z.int(),
    pageSize: z.int(),
    nextCursor: z
      .optional(z.string())
      .check(z.describe('While more rows follow: pass it as `after` for the next page (same filter and orderBy). Absent on the last page.')),
  });
}
