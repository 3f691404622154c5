import { checkHealth } from '@hatchery/core/health';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.health, () => checkHealth());
