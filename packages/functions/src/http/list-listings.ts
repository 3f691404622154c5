import { listListings } from '@hatchery/core/indexer/listings-read';
import * as routes from '../routes/indexed';
import { indexedReadHandler } from './indexed-read-handler';

export const handler = indexedReadHandler(routes.listListings, ({ query }) => listListings(query));
