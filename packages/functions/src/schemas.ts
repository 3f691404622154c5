import * as z from 'zod';
import { patterns } from '@hatchery/core/limits';

/** The path parameter of every `{address}` route. */
export const addressParams = z.object({
  address: z.string().regex(patterns.address, 'must be 0x followed by 40 hex characters'),
});

export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    totalCount: z.number().int(),
    page: z.number().int(),
    pageSize: z.number().int(),
  });

export const problemSchema = z.object({
  type: z.string().optional(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  instance: z.string(),
  errors: z.record(z.string(), z.array(z.string())).optional(),
});
