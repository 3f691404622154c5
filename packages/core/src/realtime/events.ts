import { bigIntString } from '../indexer/wire';
import { messages, parseRecord, splitRecords } from '@hatchery/platform/signalr/protocol';
import * as z from '@hatchery/platform/schema';

/** The two server-to-client events of docs/realtime.md. */
const marketChangedSchema = z.object({
  count: z.int().check(z.describe('Active listings.')),
  maxBlock: bigIntString.check(
    z.describe(
      'Highest updated_at_block over all listings, whatever their status ("0" when there are none). A chain reorganisation can lower it: order events by version.',
    ),
  ),
  version: z
    .int()
    .check(
      z.positive(),
      z.describe(
        'Grows by one with every marketChanged the service sends, across listener restarts and takeovers: the event with the highest version is the newest, and a jump of more than one means a missed event (read the listings again).',
      ),
    ),
});

const forgeFulfilledSchema = z.object({
  requestId: bigIntString,
  tokenId: z.optional(bigIntString),
  editionId: z.optional(bigIntString),
  buyer: z.string().check(z.regex(/^0x[0-9a-f]{40}$/), z.describe('The buyer, lowercase: the group the event went to, and the stream `sequence` numbers.')),
  sequence: z
    .int()
    .check(
      z.positive(),
      z.describe(
        "Numbers the buyer's forgeFulfilled events 1, 2, 3…: a jump of more than one, or a number lower than the last, means a missed event (read the wallet's forge requests again).",
      ),
    ),
});

export type MarketChanged = z.infer<typeof marketChangedSchema>;
export type ForgeFulfilled = z.infer<typeof forgeFulfilledSchema>;

export const hubEvents = {
  marketChanged: 'marketChanged',
  forgeFulfilled: 'forgeFulfilled',
} as const;

type HubEvent = (typeof hubEvents)[keyof typeof hubEvents];

/** The event a server-to-client frame carries, when it is one of hubEvents. */
export function eventOfFrame(frame: string): HubEvent | undefined {
  const [record] = splitRecords(frame) ?? [];
  const parsed = record === undefined ? undefined : parseRecord(record);
  if (parsed?.kind !== 'invocation') return undefined;
  return Object.values<string>(hubEvents).includes(parsed.target) ? (parsed.target as HubEvent) : undefined;
}

export const marketChangedMessage = (payload: MarketChanged) => messages.event(hubEvents.marketChanged, payload);

export const forgeFulfilledMessage = ({ requestId, tokenId, editionId, buyer, sequence }: ForgeFulfilled) =>
  messages.event(hubEvents.forgeFulfilled, {
    requestId,
    ...(tokenId !== undefined && { tokenId }),
    ...(editionId !== undefined && { editionId }),
    buyer,
    sequence,
  });
