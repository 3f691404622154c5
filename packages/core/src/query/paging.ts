import * as z from 'zod';
import { isMissingRelation, query } from '../db';
import { limits } from '../limits';
import { compileFilter, compileOrderBy, Params, type FieldMap, type OrderSpec } from './compile';

const boundedInt = (bounds: { min: number; max: number; default: number }) =>
  z
    .string()
    .regex(/^[0-9]+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(bounds.min, `must be at least ${bounds.min}`).max(bounds.max, `must be at most ${bounds.max}`))
    .optional()
    .transform((value) => value ?? bounds.default);

/** The query parameters every paged list accepts (SPEC.md "Endpoints"). */
export const pageQuerySchema = z.object({
  page: boundedInt(limits.page).describe(`Page number, ${limits.page.min} to ${limits.page.max}.`),
  pageSize: boundedInt(limits.pageSize).describe(`Items per page, ${limits.pageSize.min} to ${limits.pageSize.max}, default ${limits.pageSize.default}.`),
  filter: z.string().max(limits.filterLength, `at most ${limits.filterLength} characters`).optional().describe('Filter expression.'),
  orderBy: z.string().max(limits.orderByLength, `at most ${limits.orderByLength} characters`).optional().describe('Sort expression.'),
});

export type PageQuery = z.output<typeof pageQuerySchema>;

export interface Page<T> {
  items: T[];
  totalCount: number;
  page: number;
  pageSize: number;
}

export interface ListSource {
  /** Trusted SQL: the select list and FROM clause of the read model. */
  select: string;
  from: string;
  fields: FieldMap;
  order: OrderSpec;
}

/**
 * One page and the total in a single round trip: the count drives a lateral
 * page query, so an empty page still reports its total. Server conditions
 * are ANDed before the client's filter, which can only narrow them.
 */
export function buildPageQuery(
  source: ListSource,
  request: PageQuery,
  serverConditions: (params: Params) => string[] = () => [],
): { text: string; values: unknown[] } {
  const params = new Params();
  const conditions = serverConditions(params);
  if (request.filter !== undefined) conditions.push(compileFilter(request.filter, source.fields, params));
  const orderBy = compileOrderBy(request.orderBy, source.fields, source.order);
  const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
  const limit = params.add(request.pageSize);
  const offset = params.add((request.page - 1) * request.pageSize);
  const text = `SELECT counted.total_count, paged.* FROM (SELECT count(*) AS total_count FROM ${source.from} ${where}) counted
    LEFT JOIN LATERAL (SELECT true AS row_present, ${source.select} FROM ${source.from} ${where}
      ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}) paged ON true`;
  return { text, values: params.values };
}

/**
 * Runs buildPageQuery's statement and shapes the page envelope, each row
 * through `toItem`; a missing indexer table is an empty page, never an error.
 */
export async function readPage<Row extends Record<string, unknown>, Item>(
  source: ListSource,
  request: PageQuery,
  toItem: (row: Row) => Item,
  serverConditions?: (params: Params) => string[],
): Promise<Page<Item>> {
  const { text, values } = buildPageQuery(source, request, serverConditions);
  const page = (items: Item[], totalCount: number): Page<Item> => ({ items, totalCount, page: request.page, pageSize: request.pageSize });
  try {
    const rows = await query<Row & { total_count: string; row_present: boolean | null }>(text, values);
    return page(rows.filter((row) => row.row_present).map(toItem), Number(rows[0]?.total_count ?? 0));
  } catch (error) {
    if (isMissingRelation(error)) return page([], 0);
    throw error;
  }
}
