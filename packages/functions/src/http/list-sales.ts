import { salesSource } from '@hatchery/core/indexer/sales';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listSales, ({ query }) => readPage(salesSource, query));
