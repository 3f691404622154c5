import { listSales } from '@hatchery/core/indexer/sales-read';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listSales, ({ query }) => listSales(query));
