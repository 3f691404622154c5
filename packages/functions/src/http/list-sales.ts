import { listSales } from '@hatchery/core/indexer/sales';
import * as routes from '../routes/indexed';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.listSales, ({ query }) => listSales(query));
