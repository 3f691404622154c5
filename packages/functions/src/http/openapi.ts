import { openApiDocument } from '../openapi';
import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

let document: ReturnType<typeof openApiDocument> | undefined;

export const handler = httpHandler(httpRoutes.openApi, async () => (document ??= openApiDocument()));
