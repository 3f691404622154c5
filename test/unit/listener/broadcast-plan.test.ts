import { describe, expect, it } from 'vitest';
import { planBroadcast, type PeekedShard } from '@hatchery/listener/broadcast-plan';

/** Shard `shard`'s peek: these ids, and whether they are all it holds. */
const peeked = (shard: number, ids: string[], complete = true): PeekedShard => ({ shard, peek: { ids, complete } });

describe('the broadcast plan', () => {
  it('posts the small shards here with the ids already read, hands each large one out, and skips the empty ones', () => {
    const plan = planBroadcast([peeked(0, []), peeked(1, ['a', 'b']), peeked(2, ['c', 'd', 'e'], false), peeked(3, ['f']), peeked(4, [], false)], {
      broadcastShare: undefined,
      shardConcurrency: 4,
    });
    expect(plan).toEqual({ own: ['a', 'b', 'f'], handed: [2, 4] });
  });

  it('without a budget, sets no rate for either lane', () => {
    const plan = planBroadcast([peeked(0, ['a']), peeked(1, ['b'], false)], { broadcastShare: undefined, shardConcurrency: 2 });
    expect(plan).not.toHaveProperty('ownRate');
    expect(plan).not.toHaveProperty('shardRate');
  });

  it('divides the broadcast share among the lanes posting at once: one per small shard, and the handed ones up to the shard concurrency', () => {
    // Two small shards and three handed, two of them at once: four lanes.
    const plan = planBroadcast([peeked(0, ['a']), peeked(1, ['b']), peeked(2, ['c'], false), peeked(3, ['d'], false), peeked(4, ['e'], false)], {
      broadcastShare: 900,
      shardConcurrency: 2,
    });
    expect(plan.handed).toEqual([2, 3, 4]);
    expect(plan.shardRate).toBe(900 / 4);
    // The listener's own posts are the two small shards' lanes together.
    expect(plan.ownRate).toBe((900 * 2) / 4);
    // Together the lanes posting at once never exceed the share.
    expect(plan.ownRate! + Math.min(plan.handed.length, 2) * plan.shardRate!).toBe(900);
  });

  it('gives a lone lane the whole share, and counts a shard concurrency below one as one', () => {
    expect(planBroadcast([peeked(0, ['a', 'b'])], { broadcastShare: 900, shardConcurrency: 4 })).toMatchObject({ ownRate: 900, handed: [] });
    expect(planBroadcast([peeked(0, ['a'], false)], { broadcastShare: 900, shardConcurrency: 4 })).toMatchObject({ own: [], shardRate: 900 });
    expect(planBroadcast([peeked(0, ['a'], false), peeked(1, ['b'], false)], { broadcastShare: 900, shardConcurrency: 0 })).toMatchObject({
      shardRate: 900,
    });
  });

  it('plans nothing for an audience of no one', () => {
    const plan = planBroadcast([peeked(0, []), peeked(1, [])], { broadcastShare: 900, shardConcurrency: 4 });
    expect(plan.own).toEqual([]);
    expect(plan.handed).toEqual([]);
  });
});
