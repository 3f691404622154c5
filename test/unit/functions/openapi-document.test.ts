import { describe, expect, it } from 'vitest';
import { openApiDocument } from '@hatchery/functions/openapi';
import { responseOf } from '@hatchery/functions/responses';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { linkWalletBodySchema } from '@hatchery/core/accounts/wire';
import { addressPattern } from '@hatchery/core/address';

/** What the explorer shows comes from the route table and the read models, complete. */
type Operation = {
  operationId: string;
  security: unknown[];
  parameters: Array<{ name: string; in: string; description?: string; example?: unknown; schema: { pattern?: string }; 'x-fields'?: Record<string, string> }>;
  requestBody?: { content: Record<string, { schema: unknown; example: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string }; example?: unknown }> }>;
  'x-default-order'?: string;
};

const document = openApiDocument() as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
};
const documented = Object.entries(httpRoutes as Record<string, HttpRoute>).filter(
  ([, route]) => route.method !== 'OPTIONS' && route.method !== 'ANY' && route.produces !== 'other',
);
const operationOf = (route: HttpRoute) => document.paths[route.path]![route.method.toLowerCase()]!;

describe('the OpenAPI document', () => {
  it('lists each paged list’s filter and sort fields with their types and its default order, from the read model', () => {
    const lists = documented.filter(([, route]) => route.list);
    expect(lists.length).toBe(6);
    for (const [name, route] of lists) {
      const operation = operationOf(route);
      const filter = operation.parameters.find((parameter) => parameter.name === 'filter')!;
      const orderBy = operation.parameters.find((parameter) => parameter.name === 'orderBy')!;
      const fields = Object.entries(route.list!.fields);
      expect(filter['x-fields'], name).toEqual(Object.fromEntries(fields.map(([field, spec]) => [field, spec.type])));
      for (const [field] of fields) {
        expect(filter.description, name).toContain(`| \`${field}\` |`);
        expect(orderBy.description, name).toContain(`\`${field}\``);
      }
      const defaultOrder = route.list!.order.defaultOrder.map((term) => `${term.field} ${term.direction}`).join(', ');
      expect(operation['x-default-order']).toBe(defaultOrder);
      expect(orderBy.description).toContain(`Default: \`${defaultOrder}\``);
      expect(filter.description).toMatch(/Examples: `[^`]+`/);
    }
  });

  it('gives {address} its pattern and an example wallet', () => {
    const withAddress = documented.filter(([, route]) => route.path.includes('{address}'));
    expect(withAddress.length).toBe(4);
    for (const [, route] of withAddress) {
      const address = operationOf(route).parameters.find((parameter) => parameter.name === 'address')!;
      expect(address.in).toBe('path');
      expect(address.schema.pattern).toBe(addressPattern.source);
      expect(address.example).toMatch(addressPattern);
    }
  });

  it('declares the bearer scheme and requires it exactly on the protected routes', () => {
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [name, route] of documented) expect(operationOf(route).security, name).toEqual(route.auth === 'jwt' ? [{ bearer: [] }] : []);
  });

  it('shows examples as the demo data has them, with no placeholder word, and the service’s own tag last', () => {
    const document = openApiDocument();
    const examples: unknown[] = [];
    const collect = (value: unknown): void => {
      if (!value || typeof value !== 'object') return;
      for (const [key, each] of Object.entries(value)) key === 'example' ? examples.push(each) : collect(each);
    };
    collect(document.paths);
    expect(examples.length).toBeGreaterThan(20);
    expect(JSON.stringify(examples)).not.toMatch(/"text"/);
    const listings = document.paths['/marketplace/listings']!.get as {
      responses: { 200: { content: { 'application/json': { example: { items: Record<string, unknown>[] } } } } };
    };
    expect(listings.responses[200].content['application/json'].example.items[0]).toMatchObject({ status: 'Active', editionName: 'Edition 7', tokenId: '1207' });
    expect(document.tags.map((tag) => tag.name).at(-1)).toBe('service');
    expect(document.tags.map((tag) => tag.name).slice(0, 2)).toEqual(['editions', 'accounts']);
  });

  it('shows request bodies with a valid example', () => {
    const body = operationOf(httpRoutes.linkWallet).requestBody!.content['application/json']!;
    expect(linkWalletBodySchema.safeParse(body.example).success).toBe(true);
  });

  it('gives every problem response the problem schema and an example of its own status, and every JSON success an example that fits its schema', () => {
    for (const [name, route] of documented) {
      const responses = operationOf(route).responses;
      for (const [status, response] of Object.entries(responses)) {
        if (status === '200') continue;
        const problem = response.content!['application/problem+json']!;
        expect(problem.schema, `${name} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
        expect(problem.example, `${name} ${status}`).toMatchObject({ status: Number(status), title: expect.any(String), detail: expect.any(String) });
      }
      const schema = responseOf(name);
      if (schema) {
        const success = responses['200']!.content!['application/json']!;
        expect(schema.safeParse(success.example).success, `${name}: ${JSON.stringify(success.example)}`).toBe(true);
      }
    }
  });
});
