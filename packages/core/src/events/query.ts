import * as z from '@hatchery/platform/schema';
import { boundedInt, boundedText } from '../query/page-query';
import { allEventTypes, finalities } from './catalogue';

/** The bounds of GET /events' parameters. */
const eventQueryLimits = {
  pageSize: { min: 1, max: 1_000, default: 100 },
  /** The longest cursor this log writes is well under it. */
  cursorLength: 64,
  typeLength: 1_000,
} as const;

const typeList = z.pipe(
  boundedText(
    eventQueryLimits.typeLength,
    `Event types, comma-separated (${allEventTypes.join(', ')}); at latest, a type brings its .reverted. Blank is every type.`,
  ),
  z.transform((text: string | undefined, context) => {
    const types = (text ?? '')
      .split(',')
      .map((type) => type.trim())
      .filter(Boolean);
    for (const type of types)
      if (!(allEventTypes as readonly string[]).includes(type)) context.issues.push({ code: 'custom', input: text, message: `unknown event type "${type}"` });
    return types.length ? types : undefined;
  }),
);

/** GET /events' query (docs/webhooks.md, "Replay"). */
export const eventQuerySchema = z.object({
  after: boundedText(eventQueryLimits.cursorLength, 'The nextCursor of the page before; absent: from the oldest event kept.'),
  type: typeList,
  wallet: z
    .optional(z.string().check(z.regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 40-hex-digit address')))
    .register(z.globalRegistry, { description: 'Only the events that concern this wallet.' }),
  finality: z.optional(z.enum(finalities)).register(z.globalRegistry, {
    description: 'latest (default): every event as detected, retractions included; safe or finalized: only events that block covers, never one retracted.',
  }),
  pageSize: boundedInt(
    eventQueryLimits.pageSize,
    `Events per page, ${eventQueryLimits.pageSize.min} to ${eventQueryLimits.pageSize.max}, default ${eventQueryLimits.pageSize.default}.`,
  ),
});
