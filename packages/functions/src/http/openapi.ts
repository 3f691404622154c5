import { openApiDocument } from '../openapi';
import * as routes from '../routes/foundation';
import { httpHandler } from './handler';

let document: ReturnType<typeof openApiDocument> | undefined;

export const handler = httpHandler(routes.openApi, async () => (document ??= openApiDocument()));
