import * as z from '@hatchery/platform/schema';
import { minBlockParam } from '../indexer/min-block';
import { afterCondition, filterSql, orderBySql, orderTerms, Params } from './compile';
import { cursorBinding, cursorKeys, keyColumns, type Cursor } from './cursor';
import type { FieldMap, OrderSpec, OrderTerm } from './fields';
import { parsePage } from './parse';

/**
 * What a paged list is and how a request of it compiles to SQL, kept free of
 * the database client: the route table and the tools that only build
 * statements import it, and a function that reads no page carries no pg.
 * paging.ts reads the page.
 */

/*
 * Every schema here is built at each paged read's cold start, so each parameter is as few zod instances as it can be:
 * the whole numbers share their digits, and their bounds are checked in the transform that applies the default; a
 * description is registered on the schema itself, where `.check(z.describe())` would clone it.
 */

/** The bounds of the query parameters every paged list takes. */
export const pageQueryLimits = {
  page: { min: 1, max: 200, default: 1 },
  pageSize: { min: 1, max: 100, default: 20 },
  filterLength: 500,
  orderByLength: 200,
  /** A list's `after`, the cursor of the page before: the longest this service writes is well under it. */
  cursorLength: 2048,
  /** A list's `v` parameter (a version the client saw, for shared caches' keys only). */
  versionLength: 64,
} as const;

const digits = z.optional(z.string().check(z.regex(/^[0-9]+$/, 'must be a whole number')));

/* @__NO_SIDE_EFFECTS__ */
export function boundedInt(bounds: { min: number; max: number; default: number }, description: string) {
  const inBounds = z.transform((text: string | undefined, context) => {
    if (text === undefined) return bounds.default;
    const value = Number(text);
    if (value < bounds.min) context.issues.push({ code: 'custom', input: text, message: `must be at least ${bounds.min}` });
    if (value > bounds.max) context.issues.push({ code: 'custom', input: text, message: `must be at most ${bounds.max}` });
    return value;
  });
  return z.pipe(digits, inBounds).register(z.globalRegistry, { description });
}

/* @__NO_SIDE_EFFECTS__ */
export function boundedText(maxLength: number, description: string) {
  return z.optional(z.string().check(z.maxLength(maxLength, `at most ${maxLength} characters`))).register(z.globalRegistry, { description });
}

/** The query parameters every paged list accepts (docs/http-api.md, Queries). */
export const pageQuerySchema = z.object({
  page: boundedInt(pageQueryLimits.page, `Page number, ${pageQueryLimits.page.min} to ${pageQueryLimits.page.max}.`),
  pageSize: boundedInt(
    pageQueryLimits.pageSize,
    `Items per page, ${pageQueryLimits.pageSize.min} to ${pageQueryLimits.pageSize.max}, default ${pageQueryLimits.pageSize.default}.`,
  ),
  filter: boundedText(pageQueryLimits.filterLength, 'Filter expression (Gridify syntax); blank is none.'),
  orderBy: boundedText(pageQueryLimits.orderByLength, 'Sort expression (Gridify syntax); blank is the default order.'),
  after: boundedText(
    pageQueryLimits.cursorLength,
    'The nextCursor of the page before: the rows strictly after it, in the same order, whatever was indexed meanwhile. Only with the same filter and orderBy, and page 1; blank is none.',
  ),
  // Shared caches key a page by its whole URL and answer from it whatever the request's Cache-Control says.
  v: boundedText(
    pageQueryLimits.versionLength,
    "A version the client has seen (the last marketChanged's version, a fulfilled forge request's id): it makes the URL one that no shared cache answered before that change, so a reload after an event is never served an older cached page, and its totalCount is counted after the event (the count cache keys on it). It changes nothing else in the answer.",
  ),
  minBlock: minBlockParam,
});

export type PageQuery = z.output<typeof pageQuerySchema>;

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
  /** The item a row of the page makes, from the row's values in select order (its key columns follow them, unread). */
  item: (values: readonly unknown[]) => unknown;
}

/** Conditions the server always applies; they read the base table only. */
export type ServerConditions = (params: Params) => string[];

export interface Statement {
  text: string;
  values: unknown[];
}

export interface PageStatements {
  /** Reads one row more than the page holds, which tells whether more follow; each row carries its sort key (keyColumns). */
  page: Statement;
  count: Statement;
  /** The list and its compiled conditions: equal for filters that select the same rows the same way. */
  countKey: string;
  terms: OrderTerm[];
  /** What a cursor of this list, filter and order is bound to. */
  binding: string;
}

interface CompiledPage {
  /** ` WHERE …`, or '' when nothing narrows the list. */
  where: string;
  terms: OrderTerm[];
  /** The WHERE clause's parameters so far. */
  params: Params;
  /** Whether the conditions read a joined table. */
  joined: boolean;
  /** The cursor the request continues from. */
  after?: Cursor;
}

/** The request's conditions and order. Server conditions come first; the client's filter can only narrow them. */
export function compilePage(source: ListSource, request: PageQuery, serverConditions: ServerConditions = () => []): CompiledPage {
  const parsed = parsePage(source.fields, source.order, request);
  const params = new Params();
  const conditions = serverConditions(params);
  if (parsed.filter) conditions.push(filterSql(parsed.filter.tree, params));
  return {
    where: conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '',
    terms: orderTerms(parsed.order),
    params,
    joined: parsed.filter?.joined ?? false,
    ...(parsed.after && { after: parsed.after }),
  };
}

/** The page's statement and its count's. */
export function buildPageStatements(source: ListSource, request: PageQuery, serverConditions?: ServerConditions): PageStatements {
  const { where, terms, params, joined, after } = compilePage(source, request, serverConditions);
  const joins = source.joins ? ` ${source.joins}` : '';
  const count = { text: `SELECT count(*) AS total_count FROM ${source.table}${joined ? joins : ''}${where}`, values: [...params.values] };
  const binding = cursorBinding(source.name, where, count.values, terms);
  let pageWhere = where;
  if (after) {
    const rest = afterCondition(terms, cursorKeys(after, binding), params);
    pageWhere = where ? `${where} AND ${rest}` : ` WHERE ${rest}`;
  }
  const limit = params.add(request.pageSize + 1);
  const order = orderBySql(terms);
  const columns = `${source.select}, ${keyColumns(terms)}`;
  let text = `SELECT ${columns} FROM ${source.table}${joins}${pageWhere} ORDER BY ${order} LIMIT ${limit}`;
  if (!after && request.page > 1) {
    // The rows an OFFSET skips cost only their sort keys: the page's rows are found by their unique key first, then
    // read whole (conversions, joined columns) for the page alone. PostgreSQL drops the joins the inner read never uses.
    const key = source.order.tieBreaker.sql;
    const skipped = params.add((request.page - 1) * request.pageSize);
    text = `SELECT ${columns} FROM ${source.table}${joins} WHERE ${key} IN (SELECT ${key} FROM ${source.table}${joins}${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${skipped}) ORDER BY ${order}`;
  }
  return {
    page: { text, values: params.values },
    count,
    // A count shared with requests that asked no minBlock may be older than the block this one waited for; one shared
    // with requests of another `v` may be older than the event the client reloads after.
    countKey: `${source.name}\n${request.minBlock ?? ''}\n${request.v ?? ''}\n${count.text}\n${JSON.stringify(count.values)}`,
    terms,
    binding,
  };
}
