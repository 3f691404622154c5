import type { Logger } from '@hatchery/platform/telemetry/logger';
import { hubProtocol, messages, parseRecord, splitRecords, type HubRecord } from '@hatchery/platform/signalr/protocol';
import { addressPattern } from '../address';

/** Errors whose message the client may read; anything else is reported without detail. */
export class HubError extends Error {}

export const hubErrors = {
  invalidAddress: 'Invalid address.',
  tooManyGroups: 'Too many subscriptions on this connection.',
  unknownMethod: (target: string) => `Unknown hub method '${target}'.`,
  arguments: (target: string, count: number) => `Failed to invoke '${target}': it takes exactly 1 argument, ${count} given.`,
  streaming: (target: string) => `Failed to invoke '${target}': the hub has no streaming methods.`,
  unexpected: (target: string) => `An unexpected error occurred invoking '${target}' on the server.`,
  protocol: (protocol: string) => `The protocol '${protocol}' is not supported.`,
  version: (protocol: string, version: number) => `The server does not support version ${version} of the '${protocol}' protocol.`,
  closed: (reason: string) => `Connection closed with an error: ${reason}.`,
} as const;

/** What the hub's methods change: the calling connection's address groups. */
export interface HubGroups {
  /**
   * Joins the address's group, then answers the last number of its forgeFulfilled stream (core/realtime/ledger.ts),
   * read after the join: every forgeFulfilled numbered above it is posted to a group this connection is in.
   */
  subscribe(address: string): Promise<number>;
  unsubscribe(address: string): Promise<void>;
}

/** What a message from the client asks of the connection: records to send back, in order, and whether to close it after them. */
interface FrameOutcome {
  replies: string[];
  close: boolean;
  /** The message held an accepted handshake: once its answer is out, the connection may receive events. */
  handshaken: boolean;
}

/** Group names are lowercase wallet addresses (docs/realtime.md). */
function groupAddress(argument: unknown): string {
  if (typeof argument !== 'string' || !addressPattern.test(argument)) throw new HubError(hubErrors.invalidAddress);
  return argument.toLowerCase();
}

/** Each method's answer is its completion's `result`; a method that answers nothing completes without one. */
const hubMethods: Record<string, (groups: HubGroups, address: string) => Promise<number | undefined>> = {
  Subscribe: (groups, address) => groups.subscribe(address),
  Unsubscribe: async (groups, address) => void (await groups.unsubscribe(address)),
};

async function invoke(record: Extract<HubRecord, { kind: 'invocation' }>, groups: HubGroups, log: Logger): Promise<string | undefined> {
  const { target, args, invocationId, stream } = record;
  try {
    const method = Object.hasOwn(hubMethods, target) ? hubMethods[target] : undefined;
    if (!method) throw new HubError(hubErrors.unknownMethod(target));
    if (stream) throw new HubError(hubErrors.streaming(target));
    if (args.length !== 1) throw new HubError(hubErrors.arguments(target, args.length));
    const result = await method(groups, groupAddress(args[0]));
    if (invocationId === undefined) return undefined;
    return result === undefined ? messages.completion(invocationId) : messages.result(invocationId, result);
  } catch (error) {
    if (!(error instanceof HubError)) log.error({ err: error, target }, 'hub method failed');
    const message = error instanceof HubError ? error.message : hubErrors.unexpected(target);
    // A non-blocking invocation (no id) has nobody waiting for the outcome.
    return invocationId === undefined ? undefined : messages.completion(invocationId, message);
  }
}

function handshake(record: Extract<HubRecord, { kind: 'handshake' }>): FrameOutcome {
  if (record.protocol !== hubProtocol.name)
    return { replies: [messages.handshakeRefused(hubErrors.protocol(record.protocol))], close: true, handshaken: false };
  if (record.version !== hubProtocol.version) {
    return { replies: [messages.handshakeRefused(hubErrors.version(record.protocol, record.version))], close: true, handshaken: false };
  }
  return { replies: [messages.handshakeAccepted()], close: false, handshaken: true };
}

/**
 * Handles one WebSocket message of a client. Never throws: a malformed
 * message closes the connection with an error, and a failing hub method
 * answers a completion error.
 */
export async function handleMessage(text: string, groups: HubGroups, log: Logger): Promise<FrameOutcome> {
  const records = splitRecords(text);
  if (!records) return { replies: [messages.close(hubErrors.closed('a message is not terminated by the record separator'))], close: true, handshaken: false };
  const replies: string[] = [];
  let handshaken = false;
  for (const raw of records) {
    const record = parseRecord(raw);
    switch (record.kind) {
      case 'handshake': {
        const outcome = handshake(record);
        replies.push(...outcome.replies);
        if (outcome.close) return { replies, close: true, handshaken: false };
        handshaken = true;
        break;
      }
      case 'invocation': {
        const reply = await invoke(record, groups, log);
        if (reply) replies.push(reply);
        break;
      }
      case 'ping':
        replies.push(messages.ping());
        break;
      case 'close':
        return { replies, close: true, handshaken: false };
      case 'ignored':
        break;
      case 'malformed':
        replies.push(messages.close(hubErrors.closed(record.reason)));
        return { replies, close: true, handshaken: false };
    }
  }
  return { replies, close: false, handshaken };
}

/**
 * The replies to one message as management-API posts, in order, none above
 * `maxBytes` (API Gateway rejects a larger post whole): consecutive replies
 * share a post while they fit. A single reply that cannot fit (an invocation
 * id close to the message limit) is not sendable; the connection is closed
 * with an error in its place.
 */
export function repliesAsPosts(outcome: FrameOutcome, maxBytes: number): FrameOutcome {
  const posts: string[] = [];
  let post = '';
  let postBytes = 0;
  for (const reply of outcome.replies) {
    const bytes = Buffer.byteLength(reply);
    if (bytes > maxBytes) {
      if (post) posts.push(post);
      return { replies: [...posts, messages.close(hubErrors.closed('a reply exceeds the message size limit'))], close: true, handshaken: false };
    }
    if (postBytes + bytes > maxBytes) {
      posts.push(post);
      post = '';
      postBytes = 0;
    }
    post += reply;
    postBytes += bytes;
  }
  if (post) posts.push(post);
  return { replies: posts, close: outcome.close, handshaken: outcome.handshaken };
}
