import type { ShardPeek } from '@hatchery/core/realtime/connections';

/** One shard's first records, as the listener peeked them. */
export interface PeekedShard {
  shard: number;
  peek: ShardPeek;
}

/** Who posts a broadcast, and at what rate (undefined: no budget). */
interface BroadcastPlan {
  /** The connections of the small shards, which the listener posts itself with the ids it already has. */
  own: string[];
  /** The listener's own posts' rate: its part of the broadcast share. */
  ownRate?: number;
  /** The shards too large to post here, each handed to a shard invocation. */
  handed: number[];
  /** Each handed shard's rate: its part of the broadcast share; what 429s taught is the shard's own pacer's to apply. */
  shardRate?: number;
}

interface PlanInputs {
  /** The broadcast share of the budget (undefined: no budget). */
  broadcastShare: number | undefined;
  /** How many handed shards post at once. */
  shardConcurrency: number;
}

/**
 * Splits a broadcast by the shards' peeks: an empty shard costs nothing more,
 * a complete one (small) the listener posts itself, an incomplete one (large)
 * goes to a shard invocation. The broadcast share is divided among the lanes
 * posting at once: each small shard counts as one, as do the handed shards up
 * to the shard concurrency.
 */
export function planBroadcast(peeks: readonly PeekedShard[], { broadcastShare, shardConcurrency }: PlanInputs): BroadcastPlan {
  const posting = peeks.filter(({ peek }) => peek.ids.length > 0 || !peek.complete);
  const small = posting.filter(({ peek }) => peek.complete);
  const handed = posting.filter(({ peek }) => !peek.complete).map(({ shard }) => shard);
  const own = small.flatMap(({ peek }) => peek.ids);
  if (broadcastShare === undefined) return { own, handed };
  const lanes = Math.max(1, small.length + Math.min(handed.length, Math.max(1, shardConcurrency)));
  return { own, ownRate: (broadcastShare * Math.max(1, small.length)) / lanes, handed, shardRate: broadcastShare / lanes };
}
