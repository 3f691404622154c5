import { listEditions } from '@hatchery/core/indexer/editions';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.listEditions, ({ query }) => listEditions(query));
