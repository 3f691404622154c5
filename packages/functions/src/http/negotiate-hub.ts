import { negotiate } from '@hatchery/core/realtime/protocol';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

export const handler = httpHandler(httpRoutes.negotiateHub, async ({ query }) => negotiate(query.negotiateVersion));
