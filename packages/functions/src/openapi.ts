import { AppError, errorKinds, toProblem, type ErrorKind } from '@hatchery/core/errors';
import type { FieldMap, FieldType } from '@hatchery/core/query/compile';
import * as z from '@hatchery/platform/schema';
import { httpRoutes, type HttpRoute } from './routes';
import { problemSchema } from './problem-schema';
import { responseOf } from './responses';
import { exampleWallet } from './schemas';
import { pageQueryLimits } from '@hatchery/core/query/page-query';
import { minBlockLimits } from '@hatchery/core/indexer/min-block';

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  pattern?: string;
  format?: string;
  enum?: unknown[];
  const?: unknown;
  examples?: unknown[];
  description?: string;
  minimum?: number;
  anyOf?: JsonSchema[];
  [key: string]: unknown;
};

const inputSchema = (schema: z.ZodMiniType): JsonSchema => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
const outputSchema = (schema: z.ZodMiniType): JsonSchema => z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;

/** Example strings for the patterns the wire schemas use; anything else gets a plain word. */
const examplesByPattern: Array<[RegExp, string]> = [
  [/^\^0x\[0-9a-fA-F\]\{40\}\$$/, exampleWallet],
  [/^\^0x\[0-9a-f\]\{40\}\$$/, exampleWallet],
  [/^\^0x\[0-9a-fA-F\]\{130\}\$$/, `0x${'5e'.repeat(64)}1b`],
  [/^\^-\?\[0-9\]\{1,78\}\$$/, '1000000000000000000'],
  [/^\^\[0-9a-f\]\{(\d+)\}\$$/, '9f86d081884c7d659a2feaa0c55ad015'],
];

/**
 * Strings as npm start's demo data and the local stack have them (docs/local-stack.md#demo-data), by property name, so
 * the explorer's examples read like answers rather than placeholders. The challenge's lines are those of core's
 * challengeMessage, which this bundle cannot import without the database client.
 */
const demoStrings: Record<string, string> = {
  name: 'Edition 7',
  editionName: 'Edition 7',
  artUri: 'ipfs://hatchery/editions/7.png',
  nftName: 'Hatchling #1207',
  id: 'alice',
  email: 'alice@example.com',
  nickname: 'Alice',
  message: 'Link this wallet to your Hatchery account\n\nAccount: alice\nNonce: 9f86d081884c7d659a2feaa0c55ad015\nIssued At: 2026-01-01T12:00:00Z',
  // A cursor as the server writes it: the list's binding, then the last row's sort keys (listedAtBlock, tokenId).
  nextCursor: 'WyJYcTN2OXNLMkxtUGEiLCIxMDAwMzMzIiwiOTk5Il0',
  tokenId: '1207',
  editionId: '7',
  requestId: '602',
  blockTimestamp: '2026-01-01T12:00:00.000Z',
  connectionId: 'Y29ubmVjdGlvbi0xMjM0NTY3ODkw',
  connectionToken: 'Y29ubmVjdGlvbi0xMjM0NTY3ODkw',
};

/** The status a list's rows show first in the demo data, by the list's path. */
const demoStatuses: Array<[RegExp, string]> = [
  [/\/marketplace\/listings$/, 'Active'],
  [/\/staking$/, 'Staked'],
  [/\/forge-requests$/, 'Fulfilled'],
];

/** The demo strings for one route's examples: the table above, and the status its rows have. */
const demoStringsFor = (path: string) => {
  const status = demoStatuses.find(([pattern]) => pattern.test(path))?.[1];
  return status ? { ...demoStrings, status } : demoStrings;
};

/** A value that fits `schema`, derived from it so examples never drift from the wire types; a string by its property's name where the demo data has one. */
function exampleFor(schema: JsonSchema, strings: Record<string, string> = demoStrings, name?: string): unknown {
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.anyOf?.length) return exampleFor(schema.anyOf[0]!, strings, name);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([property, each]) => [property, exampleFor(each, strings, property)]));
    case 'array':
      return schema.items ? [exampleFor(schema.items, strings)] : [];
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return true;
    case 'string': {
      if (schema.format === 'date-time') return '2026-01-01T12:00:00.000Z';
      // A name means different things in different lists (an account's id is text, an edition's a number): the pattern decides.
      const demo = name !== undefined && Object.hasOwn(strings, name) ? strings[name] : undefined;
      if (demo !== undefined && (!schema.pattern || new RegExp(schema.pattern).test(demo))) return demo;
      const known = schema.pattern && examplesByPattern.find(([pattern]) => pattern.test(schema.pattern!));
      return known ? known[1] : 'text';
    }
    default:
      return null;
  }
}

/** Operators as HTML code with every character an entity (Swagger UI's Markdown reads `^` and `*` as markup, even between code spans). */
const code = (operators: string) =>
  operators
    .split(' ')
    .map((operator) => `<code>${[...operator].map((char) => `&#${char.charCodeAt(0)};`).join('')}</code>`)
    .join(' ');
const comparisonOperators = '= != < > <= >=';
const operatorsByType: Record<FieldType, string> = {
  bigint: code(comparisonOperators),
  integer: code(comparisonOperators),
  boolean: code('= !='),
  text: `${code(`${comparisonOperators} =* !* ^ !^ $ !$`)}, and ${code('/i')}`,
};
const typeNames: Record<FieldType, string> = { bigint: 'big integer', integer: 'integer', boolean: 'boolean', text: 'text' };
const sampleValue: Record<FieldType, string> = { bigint: '>=1000', integer: '>=2', boolean: '=true', text: '=*a/i' };

/** A few valid filters for these fields: one condition, then two joined, then a group. */
function filterExamples(fields: FieldMap): string[] {
  const [first, second, third] = Object.entries(fields).map(([name, spec]) => `${name}${sampleValue[spec.type]}`);
  if (!first) return [];
  if (!second) return [first];
  return [first, `${first},${second}`, ...(third ? [`(${first}|${second}),${third}`] : [])];
}

const defaultOrderOf = (list: NonNullable<HttpRoute['list']>) => list.order.defaultOrder.map((term) => `${term.field} ${term.direction}`).join(', ');

const grammar =
  'Conditions `field<op>value` are joined by `,` (and) and `|` (or), with equal precedence, left to right, and grouped with `( )`. ' +
  'A value ending in `/i` compares text case-insensitively, `\\` escapes `, | ( ) \\`, and `null` compares with NULL (`=` and `!=`). ' +
  'A field not listed here, or a value of the wrong type, is a 422.';

function filterDescription(list: NonNullable<HttpRoute['list']>): string {
  const rows = Object.entries(list.fields).map(([name, spec]) => `| \`${name}\` | ${typeNames[spec.type]} | ${operatorsByType[spec.type]} |`);
  const examples = filterExamples(list.fields)
    .map((example) => `\`${example}\``)
    .join(', ');
  return [
    `Filter expression, at most ${pageQueryLimits.filterLength} characters (Gridify syntax). The fields of this endpoint:`,
    '',
    '| field | type | operators |',
    '|---|---|---|',
    ...rows,
    '',
    grammar,
    '',
    `Examples: ${examples}.`,
  ].join('\n');
}

function orderByDescription(list: NonNullable<HttpRoute['list']>): string {
  const fields = Object.keys(list.fields);
  return (
    `Sort expression, at most ${pageQueryLimits.orderByLength} characters: \`field [asc|desc]\` joined by \`,\`, over ` +
    `${fields.map((field) => `\`${field}\``).join(', ')}. Default: \`${defaultOrderOf(list)}\`; ` +
    `every order ends with the primary key, so pages are stable. Example: \`${fields.at(-1)} desc,${fields[0]}\`.`
  );
}

function parameters(route: HttpRoute, schema: z.ZodMiniType | undefined, location: 'query' | 'path') {
  if (!schema) return [];
  const json = inputSchema(schema);
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const description =
      route.list && name === 'filter'
        ? filterDescription(route.list)
        : route.list && name === 'orderBy'
          ? orderByDescription(route.list)
          : property.description;
    return {
      name,
      in: location,
      required: location === 'path' || (json.required ?? []).includes(name),
      description,
      schema: property,
      ...(property.examples?.length && { example: property.examples[0] }),
      ...(route.list && name === 'filter' && { 'x-fields': Object.fromEntries(Object.entries(route.list.fields).map(([field, spec]) => [field, spec.type])) }),
    };
  });
}

const kindOf = (status: number) => (Object.keys(errorKinds) as ErrorKind[]).find((kind) => errorKinds[kind].status === status) ?? 'internal';

/** What each problem status means on this API, as its response description and example detail. */
const problemMeanings: Record<number, string> = {
  401: 'The bearer token is missing or invalid (`WWW-Authenticate: Bearer`).',
  403: 'A browser page of an origin that the CORS settings do not allow.',
  404: 'Not found.',
  409: 'Conflicts with existing data (an email or wallet of another account, or a wallet already linked).',
  410: 'No longer kept: no current challenge (request a new nonce), or events past retention (`oldestCursor` reads on from the oldest kept).',
  413: 'The request body is too large.',
  415: 'The request body must be JSON (`content-type: application/json`).',
  422: 'One or more fields are invalid; `errors` names each one.',
  429: 'Too many requests; `Retry-After` says when to try again.',
  500: 'An unexpected failure (no detail leaves the service).',
  503: 'The database is unavailable; `Retry-After` says when to try again.',
};

/** On a read of the indexer's data, 409 is its own: the minBlock not indexed yet. */
const notIndexedYet = {
  meaning: `\`minBlock\` is not indexed yet: the index did not reach it within ${minBlockLimits.waitMs / 1000} s. \`minBlock\` and \`indexedBlock\` say where each stands; \`Retry-After\` says when to try again. Never cached.`,
  example: () =>
    new AppError(
      'notIndexedYet',
      'minBlock 120 is not indexed yet on chain 8453: the index is at block 118 after 3000 ms. Try again after Retry-After.',
      undefined,
      undefined,
      {
        minBlock: '8453:120',
        indexedBlock: '8453:118',
      },
    ),
};

function problemResponse(route: HttpRoute, status: number) {
  const kind = kindOf(status);
  const ownConflict = route.indexed && status === 409;
  const meaning = ownConflict ? notIndexedYet.meaning : (problemMeanings[status] ?? errorKinds[kind].title);
  const error = ownConflict
    ? notIndexedYet.example()
    : new AppError(kind, meaning, status === 422 ? { [route.list ? 'filter' : route.request?.params ? 'address' : 'minBlock']: ['is invalid'] } : undefined);
  return {
    description: meaning,
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, example: toProblem(error, route.path).body } },
  };
}

function successResponse(name: string, route: HttpRoute, answerOf: (name: string) => z.ZodMiniType | undefined) {
  if (route.produces === 'text/html') return { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } };
  if (route.produces === 'other') return { description: 'The file.', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } };
  const response = answerOf(name);
  if (!response) return { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } };
  const schema = outputSchema(response);
  const indexed = route.indexed && {
    headers: {
      'X-Indexed-Block': {
        description:
          "The block each chain's data was indexed up to when it was read (at least `minBlock`), as `<chainId>=<block>` pairs separated by `, `; absent when the indexer keeps no Ponder checkpoint.",
        schema: { type: 'string', example: '8453=23456789' },
      },
      'X-Safe-Block': {
        description: "Each chain's safe block in Ponder's checkpoint, in the same form: the indexer restarts from it after a crash.",
        schema: { type: 'string', example: '8453=23456700' },
      },
      'X-Finalized-Block': {
        description: "Each chain's finalized block in Ponder's checkpoint, in the same form: a row of a block above it can still be reorged out.",
        schema: { type: 'string', example: '8453=23456759' },
      },
    },
  };
  return { description: 'OK', ...indexed, content: { 'application/json': { schema, example: exampleFor(schema, demoStringsFor(route.path)) } } };
}

function operation(name: string, route: HttpRoute, answerOf: (name: string) => z.ZodMiniType | undefined) {
  const statuses = new Set<number>([
    500,
    ...(route.request ? [422] : []),
    ...(route.request?.body ? [413, 415] : []),
    ...(route.auth === 'jwt' ? [401] : []),
    ...(route.refusesOtherOrigins ? [403] : []),
    ...(route.problems ?? []),
  ]);
  const body = route.request?.body && inputSchema(route.request.body);
  return {
    operationId: name,
    summary: route.summary,
    ...(route.list && { description: `Paged. Default order: \`${defaultOrderOf(route.list)}\`. Filter and sort fields: see \`filter\` and \`orderBy\`.` }),
    tags: [route.internal ? 'service' : (route.path.split('/')[1] ?? 'api')],
    security: route.auth === 'jwt' ? [{ bearer: [] }] : [],
    parameters: [...parameters(route, route.request?.params, 'path'), ...parameters(route, route.request?.query, 'query')],
    ...(body && { requestBody: { required: true, content: { 'application/json': { schema: body, example: exampleFor(body, demoStringsFor(route.path)) } } } }),
    ...(route.list && { 'x-default-order': defaultOrderOf(route.list) }),
    responses: {
      200: successResponse(name, route, answerOf),
      ...Object.fromEntries([...statuses].sort().map((status) => [status, problemResponse(route, status)])),
    },
  };
}

/** The OpenAPI 3.1 document, derived from the route table, its zod schemas and the read models' field maps. */
/** The document of `routes`, each answering what `answerOf` names for it (responses.ts for the route table). */
export function openApiDocument(routes: Record<string, HttpRoute> = httpRoutes, answerOf: (name: string) => z.ZodMiniType | undefined = responseOf) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, route] of Object.entries(routes)) {
    if (route.method === 'OPTIONS' || route.method === 'ANY' || route.produces === 'other') continue;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(name, route, answerOf);
  }
  // Swagger UI shows the tags in this order: the API's own as the routes first name them, the service's own last.
  const tagNames = [...new Set(Object.values(paths).flatMap((operations) => Object.values(operations).map((each) => (each as { tags: string[] }).tags[0]!)))];
  const tags = [...tagNames.filter((tag) => tag !== 'service'), ...tagNames.filter((tag) => tag === 'service')].map((tag) => ({ name: tag }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hatchery API',
      version: '1.0.0',
      description: [
        'Accounts, wallet linking, indexed on-chain data and a realtime hub.',
        '',
        `Paged lists take \`page\` (${pageQueryLimits.page.min}–${pageQueryLimits.page.max}), \`pageSize\` (${pageQueryLimits.pageSize.min}–${pageQueryLimits.pageSize.max}, default ${pageQueryLimits.pageSize.default}), ` +
          '`filter`, `orderBy` and `after` (the `nextCursor` of the page before), and answer `{ items, totalCount, page, pageSize, nextCursor? }` ' +
          'with `X-Indexed-Block`; each list names its filter and sort fields. ' +
          'Every read of indexed data takes `minBlock`, to be answered from an index that has reached a block (a 409 with `Retry-After` if it does not within a few seconds). ' +
          'Big integers (token ids, prices in wei, blocks) are decimal strings; null values are omitted.',
        '',
        'Errors are RFC 9457 `application/problem+json`. The `/accounts/me…` endpoints take `Authorization: Bearer <token>` ' +
          '(locally: `npm run token -- --uid alice --email alice@example.com`, then **Authorize**).',
      ].join('\n'),
    },
    tags,
    paths,
    components: {
      schemas: { Problem: outputSchema(problemSchema) },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An ID token of the identity provider (Firebase/Google securetoken); the first authenticated request creates the account.',
        },
      },
    },
  };
}
