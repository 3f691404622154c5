import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type BatchWriteCommandInput,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '@hatchery/platform/aws/dynamo';
import { webSocketApiQuotas } from '@hatchery/platform/aws/websocket-api';

/**
 * Hub connections and their address groups on the service's one table
 * (layout in platform/aws/table.ts). Every connection has an item in one of the
 * connection shards, `connections#<shard>` with the shard chosen from its id,
 * holding the set of its groups, and one item in each group's partition. A
 * broadcast reads the shards in parallel (one partition serves a bounded
 * number of reads a second, so one partition for all connections would bound
 * the audience), a group's fan-out reads one partition, and $disconnect
 * finds the group items without a scan. A connection receives broadcasts
 * only once its handshake is answered: a SignalR client fails on any other
 * first message, so the record $connect writes waits for the handshake.
 * Items expire when API Gateway would
 * have closed the connection anyway (2 hours), so a missed $disconnect leaves
 * nothing behind for long; reads skip expired items because DynamoDB deletes
 * them lazily.
 */
const connectionKeys = {
  shard: (shard: number) => `connections#${shard}`,
  group: (address: string) => `group#${address}`,
} as const;

/** Partitions the connection records are spread over (`connections#0` …), and so the fan-out's parallelism: one function invocation per shard. */
export const connectionShards = 16;

/** The address groups one connection may join. */
const groupsPerConnection = 100;

/** Every shard number, 0 to connectionShards - 1. */
export const shards: readonly number[] = Array.from({ length: connectionShards }, (_, shard) => shard);

/**
 * The shard of a connection: FNV-1a (32-bit) of its id, modulo the shard
 * count. Stable across processes and runtimes, which is all it needs to be:
 * the ids API Gateway assigns are random, so they spread evenly.
 */
export function shardOf(connectionId: string, count: number = connectionShards): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < connectionId.length; i++) {
    hash ^= connectionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/** The first records of a shard, and whether they are all it holds. */
export interface ShardPeek {
  ids: string[];
  complete: boolean;
}

type SubscribeResult = 'subscribed' | 'tooManyGroups' | 'gone';

export interface ConnectionStore {
  add(connectionId: string, connectedAtMs: number): Promise<void>;
  /** Its handshake is answered: broadcasts reach it from now on. Nothing happens for an unknown id. */
  join(connectionId: string): Promise<void>;
  /** Forgets a connection and its group memberships; nothing happens for an unknown id. */
  remove(connectionId: string): Promise<void>;
  subscribe(connectionId: string, address: string): Promise<SubscribeResult>;
  unsubscribe(connectionId: string, address: string): Promise<void>;
  /** The live connection ids of one shard, one page at a time. */
  shard(shard: number): AsyncIterable<string[]>;
  /** One read of at most `limit` records of a shard: the listener's way to tell a small audience from a large one. */
  peek(shard: number, limit: number): Promise<ShardPeek>;
  /** Every live connection's id, awaiting its handshake or not, shard after shard, one page at a time. */
  all(): AsyncIterable<string[]>;
  /**
   * The connection ids subscribed to one lowercase address, one page at a time, read consistently: a Subscribe
   * answered before a forgeFulfilled was numbered is among those it goes to (core/realtime/hub.ts, HubGroups).
   */
  group(address: string): AsyncIterable<string[]>;
}

const epochSeconds = (ms: number) => Math.floor(ms / 1000);

/** A conditional write refused because the connection is gone: nothing to do. */
const ignoreConditionFailure = (error: unknown) => {
  if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
};

/** The key of a connection's record in its shard. */
const connectionKey = (connectionId: string) => ({ pk: connectionKeys.shard(shardOf(connectionId)), sk: connectionId });

/**
 * A connection's record: in its shard, expiring when API Gateway would close
 * it anyway. $connect writes it awaiting the handshake; records written before
 * that mark existed count as handshaken, so an upgrade needs no migration.
 */
export const connectionItem = (connectionId: string, connectedAtMs: number, state: { awaitingHandshake: boolean }) => ({
  ...connectionKey(connectionId),
  connectedAt: connectedAtMs,
  expiresAt: epochSeconds(connectedAtMs + webSocketApiQuotas.connectionLifetimeMs),
  ...(state.awaitingHandshake ? { awaitingHandshake: true } : {}),
});

/** Keys of BatchWriteItem requests: at most 25 per call. */
const batchSize = 25;
const names = { '#pk': 'pk', '#sk': 'sk', '#groups': 'groups', '#expiresAt': 'expiresAt', '#awaiting': 'awaitingHandshake' };

export function connectionStore(options: { client?: DynamoDBDocumentClient; table?: string; now?: () => number } = {}): ConnectionStore {
  const client = () => options.client ?? dynamo();
  const table = () => options.table ?? tableName();
  const now = options.now ?? Date.now;

  /** The live records of a partition; `ready` leaves out connections still awaiting their handshake, whom no event may reach. */
  const query = (pk: string, { ready }: { ready: boolean }): QueryCommandInput => ({
    TableName: table(),
    KeyConditionExpression: '#pk = :pk',
    FilterExpression: ready ? '#expiresAt > :now AND attribute_not_exists(#awaiting)' : '#expiresAt > :now',
    ProjectionExpression: '#sk',
    ExpressionAttributeNames: {
      '#pk': names['#pk'],
      '#sk': names['#sk'],
      '#expiresAt': names['#expiresAt'],
      ...(ready && { '#awaiting': names['#awaiting'] }),
    },
    ExpressionAttributeValues: { ':pk': pk, ':now': epochSeconds(now()) },
  });
  const sortKeys = (items: Array<Record<string, unknown>> | undefined) => (items ?? []).map((item) => item.sk as string);

  async function* ids(pk: string, { ready = true, consistent = false } = {}): AsyncIterable<string[]> {
    let start: QueryCommandInput['ExclusiveStartKey'];
    do {
      const page = await client().send(
        new QueryCommand({ ...query(pk, { ready }), Limit: 1_000, ConsistentRead: consistent, ...(start && { ExclusiveStartKey: start }) }),
      );
      const found = sortKeys(page.Items);
      if (found.length) yield found;
      start = page.LastEvaluatedKey;
    } while (start);
  }

  async function deleteGroupItems(connectionId: string, addresses: string[]): Promise<void> {
    for (let start = 0; start < addresses.length; start += batchSize) {
      let requests: NonNullable<BatchWriteCommandInput['RequestItems']>[string] = addresses
        .slice(start, start + batchSize)
        .map((address) => ({ DeleteRequest: { Key: { pk: connectionKeys.group(address), sk: connectionId } } }));
      // Unprocessed items are DynamoDB shedding load; they are sent again until none is left.
      while (requests.length) {
        const result = await client().send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }));
        requests = result.UnprocessedItems?.[table()] ?? [];
      }
    }
  }

  return {
    async add(connectionId, connectedAtMs) {
      await client().send(new PutCommand({ TableName: table(), Item: connectionItem(connectionId, connectedAtMs, { awaitingHandshake: true }) }));
    },

    async join(connectionId) {
      await client()
        .send(
          new UpdateCommand({
            TableName: table(),
            Key: connectionKey(connectionId),
            UpdateExpression: 'REMOVE #awaiting',
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#pk': names['#pk'], '#awaiting': names['#awaiting'] },
          }),
        )
        .catch(ignoreConditionFailure);
    },

    async remove(connectionId) {
      const { Attributes } = await client().send(new DeleteCommand({ TableName: table(), Key: connectionKey(connectionId), ReturnValues: 'ALL_OLD' }));
      const groups = Attributes?.groups as Set<string> | undefined;
      if (groups?.size) await deleteGroupItems(connectionId, [...groups]);
    },

    async subscribe(connectionId, address) {
      let expiresAt: number;
      try {
        // The connection item is updated first and only while it exists, so a connection already gone joins no group.
        const { Attributes } = await client().send(
          new UpdateCommand({
            TableName: table(),
            Key: connectionKey(connectionId),
            UpdateExpression: 'ADD #groups :group',
            ConditionExpression: 'attribute_exists(#pk) AND (attribute_not_exists(#groups) OR size(#groups) < :max OR contains(#groups, :address))',
            ExpressionAttributeNames: { '#pk': names['#pk'], '#groups': names['#groups'] },
            ExpressionAttributeValues: { ':group': new Set([address]), ':address': address, ':max': groupsPerConnection },
            ReturnValues: 'ALL_NEW',
          }),
        );
        expiresAt = Attributes?.expiresAt as number;
      } catch (error) {
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
        const { Item } = await client().send(new GetCommand({ TableName: table(), Key: connectionKey(connectionId) }));
        return Item ? 'tooManyGroups' : 'gone';
      }
      await client().send(new PutCommand({ TableName: table(), Item: { pk: connectionKeys.group(address), sk: connectionId, expiresAt } }));
      return 'subscribed';
    },

    async unsubscribe(connectionId, address) {
      await client().send(new DeleteCommand({ TableName: table(), Key: { pk: connectionKeys.group(address), sk: connectionId } }));
      await client()
        .send(
          new UpdateCommand({
            TableName: table(),
            Key: connectionKey(connectionId),
            UpdateExpression: 'DELETE #groups :group',
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#pk': names['#pk'], '#groups': names['#groups'] },
            ExpressionAttributeValues: { ':group': new Set([address]) },
          }),
        )
        .catch(ignoreConditionFailure);
    },

    shard: (shard) => ids(connectionKeys.shard(shard)),

    async peek(shard, limit) {
      const { Items, LastEvaluatedKey } = await client().send(new QueryCommand({ ...query(connectionKeys.shard(shard), { ready: true }), Limit: limit }));
      return { ids: sortKeys(Items), complete: LastEvaluatedKey === undefined };
    },

    async *all() {
      for (const shard of shards) yield* ids(connectionKeys.shard(shard), { ready: false });
    },
    group: (address) => ids(connectionKeys.group(address), { consistent: true }),
  };
}
