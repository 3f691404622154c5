import { isMissingRelation, isUndefinedColumn, pooled, withRetry, type Queryable } from '../db';
import { indexerTable } from './names';
import { cachedFreshness, decodeCheckpoint, type Freshness } from './freshness';

type CheckpointRow = { latest: string; safe: string; finalized: string; ready: boolean | null };

/**
 * The indexer's position from Ponder's own tables, which both its layouts
 * keep in the schema Hatchery reads (`--schema`, or views of them in
 * `--views-schema`): per chain, the latest, safe and finalized checkpoints,
 * and `is_ready` once the backfill is done. Their absence is "unknown",
 * never an error.
 */
export async function readFreshness(client: Queryable, now: number = Date.now()): Promise<Freshness> {
  try {
    const { rows } = await client.query<CheckpointRow>(
      `SELECT c.latest_checkpoint AS latest, c.safe_checkpoint AS safe, c.finalized_checkpoint AS finalized,
         (SELECT (m.value->>'is_ready') = '1' FROM ${indexerTable('_ponder_meta')} m WHERE m.key = 'app') AS ready
       FROM ${indexerTable('_ponder_checkpoint')} c ORDER BY c.chain_id`,
    );
    const chains = rows.flatMap(({ latest, safe, finalized, ready }) => {
      const [decoded, safeBlock, finalizedBlock] = [decodeCheckpoint(latest), decodeCheckpoint(safe), decodeCheckpoint(finalized)];
      if (!decoded || !safeBlock || !finalizedBlock) return [];
      return [
        {
          chainId: decoded.chainId,
          block: decoded.block,
          safeBlock: safeBlock.block,
          finalizedBlock: finalizedBlock.block,
          blockTimestamp: new Date(decoded.timestamp * 1000).toISOString(),
          lagSeconds: Math.max(0, Math.floor(now / 1000) - decoded.timestamp),
          ready: ready === true,
        },
      ];
    });
    return chains.length ? { chains } : 'unknown';
  } catch (error) {
    // Another writer's tables of the same names but not Ponder's columns hold no checkpoint either.
    if (isMissingRelation(error) || isUndefinedColumn(error)) return 'unknown';
    throw error;
  }
}

/** readFreshness on a client of the pool: bounded as every statement is, and retried on a transient failure. */
export const readPooledFreshness = (): Promise<Freshness> => withRetry(() => readFreshness(pooled));

/** This instance's view of the index, shared by the indexed reads' headers and /health. */
export const currentFreshness = cachedFreshness(readPooledFreshness);
