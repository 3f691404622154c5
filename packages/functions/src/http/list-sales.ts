import { salesSource } from '@hatchery/core/indexer/sales';
import { readPage } from '@hatchery/core/query/paging';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listSales, ({ query }) => readPage(salesSource, query));
