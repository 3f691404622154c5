import { listSales } from '@hatchery/core/indexer/sales-read';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listSales, ({ query }) => listSales(query));
