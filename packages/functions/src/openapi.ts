import * as z from 'zod';
import { errorKinds } from '@hatchery/core/errors';
import { httpRoutes, type HttpRoute } from './routes';
import { problemSchema } from './schemas';

type JsonSchema = Record<string, unknown>;

const inputSchema = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
const outputSchema = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;

function parameters(schema: z.ZodType | undefined, location: 'query' | 'path') {
  if (!schema) return [];
  const json = inputSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    description: property.description,
    schema: property,
  }));
}

const problemResponse = (status: number) => ({
  description: errorKinds[Object.keys(errorKinds).find((kind) => errorKinds[kind as keyof typeof errorKinds].status === status) as keyof typeof errorKinds]?.title ?? 'Error',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

function operation(name: string, route: HttpRoute) {
  const statuses = new Set<number>([
    500,
    ...(route.request ? [422] : []),
    ...(route.request?.body ? [413, 415] : []),
    ...(route.auth === 'jwt' ? [401] : []),
    ...(route.refusesOtherOrigins ? [403] : []),
    ...(route.problems ?? []),
  ]);
  return {
    operationId: name,
    summary: route.summary,
    tags: [route.internal ? 'service' : route.path.split('/')[1] ?? 'api'],
    security: route.auth === 'jwt' ? [{ bearer: [] }] : [],
    parameters: [...parameters(route.request?.params, 'path'), ...parameters(route.request?.query, 'query')],
    requestBody: route.request?.body
      ? { required: true, content: { 'application/json': { schema: inputSchema(route.request.body) } } }
      : undefined,
    responses: {
      200: {
        description: 'OK',
        content: route.response ? { 'application/json': { schema: outputSchema(route.response) } } : undefined,
      },
      ...Object.fromEntries([...statuses].sort().map((status) => [status, problemResponse(status)])),
    },
  };
}

/** The OpenAPI 3.1 document, derived from the route table and its zod schemas. */
export function openApiDocument(routes: Record<string, HttpRoute> = httpRoutes) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, route] of Object.entries(routes)) {
    if (route.method === 'OPTIONS' || route.method === 'ANY') continue;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(name, route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hatchery API',
      version: '1.0.0',
      description:
        'Accounts, wallet linking and indexed on-chain data. Filters: `field<op>value` joined by `,` (and) and `|` (or), grouped with `( )`; ' +
        'operators `= != < > <= >= =* !* ^ !^ $ !$`; a value ending in `/i` is case-insensitive; `\\` escapes; `null` compares with NULL. ' +
        'orderBy: `field [asc|desc]` joined by `,`.',
    },
    paths,
    components: {
      schemas: { Problem: outputSchema(problemSchema) },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
