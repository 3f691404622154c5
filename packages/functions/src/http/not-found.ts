import { AppError } from '@hatchery/core/errors';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.notFound, async () => {
  throw new AppError('notFound', 'No route matches this method and path.');
});
