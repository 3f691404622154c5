import { transaction } from '@hatchery/core/db';
import { coveredBlock, positionOf, readEvents } from '@hatchery/core/events/replay';
import { currentFreshness } from '@hatchery/core/indexer/freshness-read';
import * as routes from '../routes/events';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.listEvents, async ({ query }) => {
  const finality = query.finality ?? 'latest';
  const covered = finality === 'latest' ? undefined : coveredBlock(await currentFreshness(), finality);
  const after = positionOf(query.after);
  return transaction((client) => readEvents(client, { after, types: query.type, wallet: query.wallet, finality, limit: query.pageSize }, covered));
});
