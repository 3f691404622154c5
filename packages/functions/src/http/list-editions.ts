import { listEditions } from '@hatchery/core/indexer/editions-read';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listEditions, ({ query }) => listEditions(query));
