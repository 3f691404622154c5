import { listListings } from '@hatchery/core/indexer/listings-read';
import * as routes from '../routes/indexed';
import { listHandler } from './list-handler';

export const handler = listHandler(routes.listListings, ({ query }) => listListings(query));
