import { budgetShares, nextBroadcastAt, pacer, type FanOutBudget } from '@hatchery/core/realtime/budget';
import type { Fulfilment, Listings } from '@hatchery/core/realtime/changes';
import { shards, type ConnectionStore } from '@hatchery/core/realtime/connections';
import { forgeFulfilledMessage, marketChangedMessage } from '@hatchery/core/realtime/events';
import { addDeliveries, inOnePage, noDelivery, post, type Delivery } from '@hatchery/core/realtime/fan-out';
import type { DeliveryLedger } from '@hatchery/core/realtime/ledger';
import { deliveryDeadlines } from '@hatchery/platform/aws/deadlines';
import type { HubConnections } from '@hatchery/platform/aws/management';
import type { Logger } from '@hatchery/platform/telemetry/logger';
import { planBroadcast, type PeekedShard } from './broadcast-plan';
import type { listenerMetrics } from './metrics';
import { shardDeadline, type ShardInvoker } from './shards';

export interface BroadcasterParts {
  store: ConnectionStore;
  /** Where the listener's own broadcast posts go. */
  connections: HubConnections;
  /** Where forgeFulfilled goes: a socket pool of its own, so it never queues behind a broadcast. */
  forgeConnections: HubConnections;
  /** Who posts a large broadcast's shards. */
  shards: ShardInvoker;
  ledger: DeliveryLedger;
  budget: FanOutBudget;
  fanOutConcurrency: number;
  /** Broadcasts up to this size the listener posts itself (options.ts gives the default). */
  smallAudience: number;
  shardConcurrency: number;
  log: Logger;
}

/** What the listener counts of its deliveries (ListenerStats). */
export interface DeliveryCounters {
  marketChanged: number;
  forgeFulfilled: number;
  sent: number;
  gone: number;
  /** Posts not delivered: failed in a way that may hide a delivery, or not made before the deadline. */
  undelivered: number;
  shardsHanded: number;
  failedShards: number;
}

/**
 * The listener's two ways out: marketChanged to every connection, shard by
 * shard, and forgeFulfilled to a buyer's group. Each has a pacer for the life
 * of the process (its share of the fan-out budget, or none), so what a 429
 * taught slows the next broadcast too, and the handed shards' rates follow it.
 */
export function broadcaster(parts: BroadcasterParts, metrics: ReturnType<typeof listenerMetrics>, counters: DeliveryCounters) {
  const { store, connections, forgeConnections, shards: invoke, ledger, budget, fanOutConcurrency, smallAudience, shardConcurrency, log } = parts;
  const shares = budgetShares(budget);
  const broadcastPace = pacer(shares?.broadcast ?? 0);
  // A second's worth at once: a buyer's group is a few connections, which go out together.
  const targetedPace = pacer(shares?.targeted ?? 0, shares ? Math.max(1, Math.floor(shares.targeted)) : 1);
  let nextAt = 0;
  const count = (delivery: Delivery) => {
    counters.sent += delivery.sent;
    counters.gone += delivery.gone;
    counters.undelivered += delivery.failed + delivery.skipped;
  };

  return {
    /** When the next broadcast may start (performance.now()): once the last one's audience has had its time at the budget. */
    get nextBroadcastAt() {
      return nextAt;
    },

    /**
     * marketChanged to every connection, all shards at once, numbered when it
     * starts so that the versions clients see grow by one. One read of each
     * shard tells an empty one, a small one (posted here, with the ids it
     * already has) and a large one (handed to the shard invoker). Resolves
     * whether every connection was reached: false when a post was left
     * undelivered, or a shard could not be read or handed out.
     */
    async broadcast(listings: Listings, nextVersion: () => Promise<number>): Promise<boolean> {
      const version = await nextVersion();
      const frame = marketChangedMessage({ ...listings, version });
      const event = `marketChanged#${version}`;
      counters.marketChanged++;
      const startedAt = performance.now();
      let shardFailed = false;
      const failed = (shard: number) => (error: unknown) => {
        shardFailed = true;
        counters.failedShards++;
        log.error({ err: error, shard }, 'a shard of a broadcast could not be handed out');
        return undefined;
      };
      // One more than a small shard may hold: the read then ends short of the limit exactly when the shard is small.
      const perShard = Math.floor(smallAudience / shards.length);
      const peeks = await Promise.all(shards.map((shard) => store.peek(shard, perShard + 1).then((peek): PeekedShard => ({ shard, peek }), failed(shard))));
      const plan = planBroadcast(
        peeks.filter((each) => each !== undefined),
        { broadcastShare: shares?.broadcast, shardConcurrency },
      );
      if (plan.own.length && plan.ownRate !== undefined) broadcastPace.setTarget(plan.ownRate);
      let own: Delivery = noDelivery;
      let handed: Delivery = noDelivery;
      await Promise.all([
        plan.own.length &&
          post(inOnePage(plan.own), frame, { store, connections, concurrency: fanOutConcurrency, log, pace: broadcastPace }, shardDeadline()).then(
            // What a deadline left untaken is skipped too.
            (delivery) => (own = addDeliveries(own, { ...delivery, skipped: plan.own.length - delivery.sent - delivery.gone - delivery.failed })),
          ),
        ...plan.handed.map(async (shard) => {
          if (!invoke.postsHere) counters.shardsHanded++;
          const delivery = await invoke({ event, shard, frame, ...(plan.shardRate && { postsPerSecond: plan.shardRate }) }).catch(failed(shard));
          if (!delivery) return;
          broadcastPace.learn(delivery.paceFactor);
          if (invoke.postsHere) own = addDeliveries(own, delivery);
          else handed = addDeliveries(handed, delivery);
        }),
      ]);
      const total = addDeliveries(own, handed);
      count(total);
      nextAt = nextBroadcastAt(startedAt, total.sent + total.gone + total.failed + total.skipped, budget);
      metrics.delivered('marketChanged', own, startedAt);
      return !shardFailed && total.failed + total.skipped === 0;
    },

    /**
     * forgeFulfilled to the buyer's group, numbered in the buyer's stream and
     * claimed before its first post: a listener that takes over and reads the
     * same fulfilment again finds the claim and sends nothing. The group is
     * read after the number is taken, so every connection whose Subscribe
     * answered a lower number receives it (HubGroups in core/realtime/hub.ts).
     */
    async fulfil(fulfilment: Fulfilment): Promise<void> {
      const sequence = await ledger.nextForgeSequence(fulfilment.buyer);
      if (!(await ledger.claimFulfilment(fulfilment.buyer, fulfilment.requestId))) {
        log.info({ requestId: fulfilment.requestId }, 'forgeFulfilled already sent by an earlier leader');
        return;
      }
      const postedAt = performance.now();
      const parts = { store, connections: forgeConnections, concurrency: fanOutConcurrency, log, pace: targetedPace };
      const delivery = await post(
        store.group(fulfilment.buyer),
        forgeFulfilledMessage({ ...fulfilment, sequence }),
        parts,
        Date.now() + deliveryDeadlines.targetedMs,
      );
      count(delivery);
      counters.forgeFulfilled++;
      metrics.delivered('forgeFulfilled', delivery, postedAt);
    },
  };
}
