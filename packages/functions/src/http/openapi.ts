import { openApiJson } from '../openapi-json';
import * as routes from '../routes/docs';
import { httpHandler } from './handler';

/**
 * The document as `npm run generate -w @hatchery/functions` wrote it from the
 * route table: building it here would construct every route's schemas at each
 * cold start, for a document that only changes with the code.
 */
let document: unknown;

export const handler = httpHandler(routes.openApi, async () => (document ??= JSON.parse(openApiJson)));
