import { listSales } from '@hatchery/core/indexer/sales';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.listSales, ({ query }) => listSales(query));
