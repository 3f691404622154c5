import { editionsSource } from '@hatchery/core/indexer/editions';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listEditions, ({ query }) => readPage(editionsSource, query));
