import type { WireType } from '../query/read-model';

/**
 * The event log's catalogue (docs/webhooks.md), declared once as plain data:
 * each event type with the fields of its payload. The payload's zod schema
 * (events/schema.ts, for the OpenAPI document and @hatchery/client's types),
 * the detection's reads (events/detection.ts) and the docs' table derive from
 * it. Declaring it builds no schema, so handlers import it at no cost.
 */

export interface PayloadField {
  readonly type: WireType;
  /** Absent from the payload when the indexer holds NULL. */
  readonly optional?: true;
  readonly description: string;
}

export interface EventDeclaration {
  readonly description: string;
  /** What the entity key of an event of this type names. */
  readonly entity: string;
  readonly payload: Readonly<Record<string, PayloadField>>;
}

export const eventCatalogue = {
  'forge.fulfilled': {
    description: 'A forge request was fulfilled: its NFT was minted to the buyer.',
    entity: 'the request id',
    payload: {
      requestId: { type: 'bigint', description: 'The forge request.' },
      buyer: { type: 'address', description: 'Who asked for it, and owns the NFT.' },
      tier: { type: 'int', description: 'The tier asked for.' },
      tokenId: { type: 'bigint', optional: true, description: 'The NFT minted.' },
      editionId: { type: 'bigint', optional: true, description: 'The NFT’s edition.' },
    },
  },
  'sale.completed': {
    description: 'A marketplace sale: the listed NFT changed hands for its price.',
    entity: 'the sale id',
    payload: {
      saleId: { type: 'string', description: 'The indexer’s id of the sale.' },
      tokenId: { type: 'bigint', description: 'The NFT sold.' },
      seller: { type: 'address', description: 'Who sold it (credited the price, less fee and royalty).' },
      buyer: { type: 'address', description: 'Who bought it.' },
      price: { type: 'bigint', description: 'Wei.' },
      platformFee: { type: 'bigint', description: 'Wei.' },
      royalty: { type: 'bigint', description: 'Wei.' },
    },
  },
  'listing.opened': {
    description: 'An NFT was listed for sale.',
    entity: '`<tokenId>@<listedAtBlock>`: a token listed again is another listing',
    payload: {
      tokenId: { type: 'bigint', description: 'The NFT listed.' },
      seller: { type: 'address', description: 'Who listed it.' },
      price: { type: 'bigint', description: 'Wei, as listed.' },
      editionId: { type: 'bigint', optional: true, description: 'The NFT’s edition.' },
      listedAtBlock: { type: 'bigint', description: 'The block of the listing.' },
    },
  },
  'listing.closed': {
    description: 'A listing ended: sold, or cancelled by its seller.',
    entity: '`<tokenId>@<listedAtBlock>`, as the listing.opened it closes',
    payload: {
      tokenId: { type: 'bigint', description: 'The NFT that was listed.' },
      seller: { type: 'address', description: 'Who listed it.' },
      price: { type: 'bigint', description: 'Wei, as listed.' },
      status: { type: 'string', description: '`Sold` or `Cancelled`.' },
      listedAtBlock: { type: 'bigint', description: 'The block of the listing it closes.' },
    },
  },
  'nft.transferred': {
    description:
      'An NFT changed owner: minted (`from` is the zero address), transferred, sold, or burned (`to` is the zero address). An owner change undone before its block is final is retracted by `nft.transferred.reverted`.',
    entity: 'the token id',
    payload: {
      tokenId: { type: 'bigint', description: 'The NFT.' },
      from: { type: 'address', description: 'The owner before.' },
      to: { type: 'address', description: 'The owner after.' },
    },
  },
} as const satisfies Record<string, EventDeclaration>;

export type EventType = keyof typeof eventCatalogue;
export type RevertedType = `${EventType}.reverted`;
/** Every type the log holds: each declared type, and its retraction. */
export type AnyEventType = EventType | RevertedType;

export const eventTypes = Object.keys(eventCatalogue) as EventType[];
export const revertedSuffix = '.reverted';
export const allEventTypes: readonly AnyEventType[] = [...eventTypes, ...eventTypes.map((type) => `${type}${revertedSuffix}` as RevertedType)];

/** The finality a reader or an endpoint asks for: every event as detected, or only those the indexer's safe or finalized block covers. */
export const finalities = ['latest', 'safe', 'finalized'] as const;
export type Finality = (typeof finalities)[number];

/** The zero address: the `from` of a mint and the `to` of a burn. */
export const zeroAddress = '0x0000000000000000000000000000000000000000';
