import { listEditions } from '@hatchery/core/indexer/editions-read';
import * as routes from '../routes/foundation';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listEditions, ({ query }) => listEditions(query));
