import * as z from '@hatchery/platform/schema';

/**
 * A problem+json body (docs/http-api.md, Errors), as the OpenAPI document and
 * the smoke checks describe it. Handlers build problems with core's
 * toProblem and never construct this, so it stays out of their bundles.
 */
export const problemSchema = z.object({
  type: z.optional(z.string()),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  instance: z.string(),
  errors: z.optional(z.record(z.string(), z.array(z.string()))),
});
