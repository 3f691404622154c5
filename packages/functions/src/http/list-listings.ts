import { listListings } from '@hatchery/core/indexer/listings';
import * as routes from '../routes/indexed';
import { httpHandler } from './handler';

export const handler = httpHandler(routes.listListings, ({ query }) => listListings(query));
