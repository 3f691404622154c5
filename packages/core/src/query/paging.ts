import * as z from 'zod';
import { isMissingRelation, query } from '../db';
import { limits } from '../limits';
import { compileFilter, compileOrderBy, Params, type FieldMap, type OrderSpec } from './compile';
import { listCounts, type CountCache } from './count-cache';

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
  filter: z.string().max(limits.filterLength, `at most ${limits.filterLength} characters`).optional().describe('Filter expression (Gridify syntax); blank is none.'),
  orderBy: z.string().max(limits.orderByLength, `at most ${limits.orderByLength} characters`).optional().describe('Sort expression (Gridify syntax); blank is the default order.'),
  // Shared caches key a page by its whole URL and answer from it whatever the request's Cache-Control says.
  v: z
    .string()
    .max(limits.versionLength, `at most ${limits.versionLength} characters`)
    .optional()
    .describe(
      "Ignored by the server. A version the client has seen (the last marketChanged's maxBlock, a fulfilled forge request's id) makes the URL one that no shared cache answered before that change, so a reload after an event is never served an older cached page.",
    ),
});

export type PageQuery = z.output<typeof pageQuerySchema>;

export interface Page<T> {
  items: T[];
  totalCount: number;
  page: number;
  pageSize: number;
}

export interface ListSource {
  /** Names the list in the count cache's keys. */
  name: string;
  /** Trusted SQL: the select list of the read model. */
  select: string;
  /** The base table and its alias: alone, it counts rows whose conditions name no joined field. */
  table: string;
  /** LEFT JOINs on unique keys, so they never change the number of rows. */
  joins?: string;
  fields: FieldMap;
  order: OrderSpec;
}

/** Conditions the server always applies; they read the base table only. */
export type ServerConditions = (params: Params) => string[];

export interface Statement {
  text: string;
  values: unknown[];
}

export interface PageStatements {
  page: Statement;
  count: Statement;
  /** The list and its compiled conditions: equal for filters that select the same rows the same way. */
  countKey: string;
}

export interface CompiledPage {
  /** ` WHERE …`, or '' when nothing narrows the list. */
  where: string;
  orderBy: string;
  /** The WHERE clause's parameters so far. */
  params: Params;
  /** Whether the conditions read a joined table. */
  joined: boolean;
}

/** The request's conditions and order. Server conditions come first; the client's filter can only narrow them. */
export function compilePage(source: ListSource, request: PageQuery, serverConditions: ServerConditions = () => []): CompiledPage {
  const params = new Params();
  const conditions = serverConditions(params);
  const filter = compileFilter(request.filter, source.fields, params);
  if (filter) conditions.push(filter.sql);
  const orderBy = compileOrderBy(request.orderBy, source.fields, source.order);
  return { where: conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '', orderBy, params, joined: filter?.joined ?? false };
}

/** The page's statement and its count's. */
export function buildPageStatements(source: ListSource, request: PageQuery, serverConditions?: ServerConditions): PageStatements {
  const { where, orderBy, params, joined } = compilePage(source, request, serverConditions);
  const joins = source.joins ? ` ${source.joins}` : '';
  const count = { text: `SELECT count(*) AS total_count FROM ${source.table}${joined ? joins : ''}${where}`, values: [...params.values] };
  const limit = params.add(request.pageSize);
  const offset = params.add((request.page - 1) * request.pageSize);
  return {
    page: { text: `SELECT ${source.select} FROM ${source.table}${joins}${where} ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}`, values: params.values },
    count,
    countKey: `${source.name}\n${count.text}\n${JSON.stringify(count.values)}`,
  };
}

/**
 * A page that is not full ends the list, so it gives the exact total itself;
 * only a full page (or one past the end) asks the shared count.
 */
function totalFromPage(request: PageQuery, itemCount: number): number | undefined {
  const before = (request.page - 1) * request.pageSize;
  if (itemCount > 0 && itemCount < request.pageSize) return before + itemCount;
  if (itemCount === 0 && request.page === 1) return 0;
  return undefined;
}

/**
 * Reads one page and its total and shapes the envelope, each row through
 * `toItem`; a missing indexer table is an empty page, never an error.
 */
export async function readPage<Row extends Record<string, unknown>, Item>(
  source: ListSource,
  request: PageQuery,
  toItem: (row: Row) => Item,
  serverConditions?: ServerConditions,
  counts: CountCache = listCounts,
): Promise<Page<Item>> {
  const statements = buildPageStatements(source, request, serverConditions);
  const page = (items: Item[], totalCount: number): Page<Item> => ({ items, totalCount, page: request.page, pageSize: request.pageSize });
  try {
    const rows = await query<Row>(statements.page.text, statements.page.values);
    const totalCount =
      totalFromPage(request, rows.length) ??
      // A shared count may be a little older than the page; it never claims fewer rows than the page shows.
      Math.max(
        rows.length ? (request.page - 1) * request.pageSize + rows.length : 0,
        await counts.get(statements.countKey, async () => {
          const [row] = await query<{ total_count: string }>(statements.count.text, statements.count.values);
          return Number(row?.total_count ?? 0);
        }),
      );
    return page(rows.map(toItem), totalCount);
  } catch (error) {
    if (isMissingRelation(error)) return page([], 0);
    throw error;
  }
}
