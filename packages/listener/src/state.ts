import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '@hatchery/platform/aws/dynamo';
import type { ForgeCursor, ListingsSnapshot } from '@hatchery/core/realtime/changes';

/** What the leading listener has already reported: the last listings snapshot and the forge cursor. */
export interface DetectionState {
  snapshot?: ListingsSnapshot;
  cursor?: ForgeCursor;
  /** When a read last confirmed this state (epoch ms). */
  readAt: number;
}

export interface StateStore {
  load(): Promise<DetectionState | undefined>;
  save(state: DetectionState): Promise<void>;
}

/**
 * The state lives on the service's table (pk "listener", sk "state") so a
 * standby that takes over, or a new task after a deploy, carries on where
 * the last leader stopped instead of dropping what happened in between.
 */
export function dynamoStateStore(options: { client?: DynamoDBDocumentClient; table?: string } = {}): StateStore {
  const key = { pk: 'listener', sk: 'state' };
  const client = () => options.client ?? dynamo();
  const table = () => options.table ?? tableName();
  return {
    async load() {
      const { Item } = await client().send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }));
      return Item ? (JSON.parse(Item.state as string) as DetectionState) : undefined;
    },
    async save(state) {
      await client().send(new PutCommand({ TableName: table(), Item: { ...key, state: JSON.stringify(state) } }));
    },
  };
}

/** The state to lead with: the newest of the saved and the remembered one, unless both are too old to be worth catching up from. */
export function resumeFrom(
  saved: DetectionState | undefined,
  remembered: DetectionState | undefined,
  now: number,
  maxAgeMs: number,
): DetectionState | undefined {
  const newest = [saved, remembered].filter((state) => state !== undefined).sort((a, b) => b.readAt - a.readAt)[0];
  return newest && now - newest.readAt <= maxAgeMs ? newest : undefined;
}
