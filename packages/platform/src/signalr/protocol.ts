import { randomBytes } from 'node:crypto';
import * as z from '../schema';

/**
 * The SignalR JSON hub protocol, version 1, as far as the hub speaks it
 * (docs/realtime.md, The hub). Every record is JSON followed by
 * the record separator; one WebSocket message may carry several records.
 */
const recordSeparator = '\u001e';

const messageType = {
  invocation: 1,
  streamItem: 2,
  completion: 3,
  streamInvocation: 4,
  cancelInvocation: 5,
  ping: 6,
  close: 7,
} as const;

export const hubProtocol = { name: 'json', version: 1 } as const;

const frame = (message: object): string => `${JSON.stringify(message)}${recordSeparator}`;

/** The records of one message, or undefined when its last record is not terminated (a malformed frame). */
export function splitRecords(text: string): string[] | undefined {
  if (!text.endsWith(recordSeparator)) return undefined;
  return text.slice(0, -recordSeparator.length).split(recordSeparator);
}

const handshakeSchema = z.object({ protocol: z.string(), version: z.int() });

const invocationSchema = z.object({
  type: z.union([z.literal(messageType.invocation), z.literal(messageType.streamInvocation)]),
  invocationId: z.optional(z.string().check(z.minLength(1))),
  target: z.string().check(z.minLength(1)),
  arguments: z.array(z.unknown()),
});

export type HubRecord =
  | { kind: 'handshake'; protocol: string; version: number }
  | { kind: 'invocation'; invocationId?: string; target: string; args: unknown[]; stream: boolean }
  | { kind: 'ping' }
  | { kind: 'close' }
  /** Message kinds a server may receive and has nothing to do for (stream items, completions, acks, future kinds). */
  | { kind: 'ignored' }
  | { kind: 'malformed'; reason: string };

function parseJson(record: string): unknown {
  try {
    return JSON.parse(record);
  } catch {
    return undefined;
  }
}

/** Reads one record. A handshake request is told apart by shape, since the hub keeps no per-connection state. */
export function parseRecord(record: string): HubRecord {
  const value = parseJson(record);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'malformed', reason: 'a message is not a JSON object' };
  const type = (value as { type?: unknown }).type;
  if (type === undefined) {
    const handshake = handshakeSchema.safeParse(value);
    return handshake.success ? { kind: 'handshake', ...handshake.data } : { kind: 'malformed', reason: 'the handshake request is invalid' };
  }
  if (typeof type !== 'number') return { kind: 'malformed', reason: 'a message has no numeric type' };
  switch (type) {
    case messageType.invocation:
    case messageType.streamInvocation: {
      const invocation = invocationSchema.safeParse(value);
      if (!invocation.success) return { kind: 'malformed', reason: 'an invocation is invalid' };
      const { invocationId, target, arguments: args } = invocation.data;
      return { kind: 'invocation', invocationId, target, args, stream: type === messageType.streamInvocation };
    }
    case messageType.ping:
      return { kind: 'ping' };
    case messageType.close:
      return { kind: 'close' };
    default:
      return { kind: 'ignored' };
  }
}

export const messages = {
  handshakeAccepted: () => frame({}),
  handshakeRefused: (error: string) => frame({ error }),
  ping: () => frame({ type: messageType.ping }),
  completion: (invocationId: string, error?: string) =>
    frame(error === undefined ? { type: messageType.completion, invocationId } : { type: messageType.completion, invocationId, error }),
  /** A completion that answers the method's return value, which the client's `invoke` resolves to. */
  result: (invocationId: string, result: unknown) => frame({ type: messageType.completion, invocationId, result }),
  close: (error?: string) => frame(error === undefined ? { type: messageType.close } : { type: messageType.close, error, allowReconnect: false }),
  /** A server-to-client event: an invocation without an id, so the client sends nothing back. */
  event: (target: string, payload: unknown) => frame({ type: messageType.invocation, target, arguments: [payload] }),
};

/** Connection tokens handed out by negotiate: 16 random bytes, base64url. */
export const connectionTokenPattern = /^[A-Za-z0-9_-]{22}$/;
const newToken = () => randomBytes(16).toString('base64url');

export const negotiateQuerySchema = z.object({
  negotiateVersion: z
    .optional(z.pipe(z.string().check(z.regex(/^[0-9]{1,3}$/, 'must be a whole number')), z.transform(Number)))
    .check(z.describe('Negotiation protocol version the client speaks (the SignalR client sends 1).')),
});

export const negotiateResponseSchema = z.object({
  negotiateVersion: z.int(),
  connectionId: z.string(),
  connectionToken: z.optional(z.string()),
  availableTransports: z.array(z.object({ transport: z.literal('WebSockets'), transferFormats: z.array(z.literal('Text')) })),
});

export type NegotiateResponse = z.infer<typeof negotiateResponseSchema>;

/**
 * SignalR negotiation. The WebSocket API assigns its own connection ids, so
 * the ids here only satisfy the client; version 0 clients get no token and
 * use the connection id in its place.
 */
export function negotiate(requestedVersion: number | undefined): NegotiateResponse {
  const availableTransports = [{ transport: 'WebSockets' as const, transferFormats: ['Text' as const] }];
  if (!requestedVersion) return { negotiateVersion: 0, connectionId: newToken(), availableTransports };
  return { negotiateVersion: 1, connectionId: newToken(), connectionToken: newToken(), availableTransports };
}
