import { listEditions } from '@hatchery/core/indexer/editions';
import * as routes from '../routes/foundation';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listEditions, ({ query }) => listEditions(query));
