import { editionsSource } from '@hatchery/core/indexer/editions';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/foundation';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listEditions, ({ query }) => readPage(editionsSource, query));
