import { listEditions } from '@hatchery/core/indexer/editions';
import * as routes from '../routes/foundation';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.listEditions, ({ query }) => listEditions(query));
