import { parseMinBlock } from '@hatchery/core/indexer/min-block';
import { getSummary } from '@hatchery/core/indexer/summary-read';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.getSummary, ({ query }) => getSummary(parseMinBlock(query.minBlock)));
