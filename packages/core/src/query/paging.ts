import { hash } from 'node:crypto';
import { LRUCache } from '@aws-lambda-powertools/commons/utils/lru-cache';
import { isMissingRelation, query, queryValues } from '../db';
import { Params } from './compile';
import { encodeCursor, keysOf } from './cursor';
import { listCounts, type CountCache } from './count-cache';
import { buildPageStatements, type ListSource, type PageQuery, type PageStatements, type ServerConditions } from './page-query';

interface Page<T> {
  items: T[];
  totalCount: number;
  page: number;
  pageSize: number;
  /** While more rows follow: the `after` of the next page. */
  nextCursor?: string;
}

/**
 * An offset page that ends the list gives the exact total itself; only one
 * that more rows follow (or one past the end) asks the shared count. A
 * cursor page does not know how many rows came before it, so it always asks.
 */
function totalFromPage(request: PageQuery, itemCount: number, more: boolean): number | undefined {
  if (request.after) return undefined;
  const before = (request.page - 1) * request.pageSize;
  if (itemCount > 0 && !more) return before + itemCount;
  if (itemCount === 0 && request.page === 1) return 0;
  return undefined;
}

/** Compiled page statements kept per list and instance, by the request's query. */
const compiledPagesPerList = 256;

const compiled = new WeakMap<ListSource, LRUCache<string, PageStatements>>();

/**
 * The statements of a request, compiled once per instance: the same list,
 * server conditions and query always make the same ones, and a busy list
 * sees the same few queries again and again.
 */
export function pageStatements(source: ListSource, request: PageQuery, serverConditions?: ServerConditions): PageStatements {
  const server = new Params();
  const conditions = serverConditions?.(server) ?? [];
  // The table names the indexer's schema, a setting that tests and tools change in one process. JSON, so that no
  // client text (a newline in a filter) can make two requests' keys alike.
  const key = JSON.stringify([
    source.table,
    conditions,
    server.values,
    request.filter,
    request.orderBy,
    request.after,
    request.page,
    request.pageSize,
    request.minBlock,
    request.v,
  ]);
  let memo = compiled.get(source);
  if (!memo) compiled.set(source, (memo = new LRUCache({ maxSize: compiledPagesPerList })));
  let statements = memo.get(key);
  if (!statements) {
    const built = buildPageStatements(source, request, serverConditions);
    // The count cache holds many more entries than this memo: a digest keeps each small whatever the filter, taken once here.
    statements = { ...built, countKey: hash('sha256', built.countKey, 'base64url') };
    memo.add(key, statements);
  }
  return statements;
}

/**
 * Reads one page and its total and shapes the envelope, each row made the
 * source's item; a missing indexer table is an empty page, never an error.
 */
export async function readPage<Item = unknown>(
  source: ListSource,
  request: PageQuery,
  serverConditions?: ServerConditions,
  counts: CountCache = listCounts,
): Promise<Page<Item>> {
  const statements = pageStatements(source, request, serverConditions);
  try {
    const read = await queryValues(statements.page.text, statements.page.values);
    const more = read.length > request.pageSize;
    const itemCount = more ? request.pageSize : read.length;
    const items: Item[] = [];
    for (let index = 0; index < itemCount; index++) items.push(source.item(read[index]!) as Item);
    const last = read[itemCount - 1];
    const nextCursor = more && last ? encodeCursor(statements.binding, keysOf(last, statements.terms)) : undefined;
    const shown = itemCount === 0 ? 0 : request.after ? itemCount : (request.page - 1) * request.pageSize + itemCount;
    const totalCount =
      totalFromPage(request, itemCount, more) ??
      // A shared count may be a little older than the page; it never claims fewer rows than the page shows.
      Math.max(
        shown,
        await counts.get(statements.countKey, async () => {
          const [row] = await query<{ total_count: string }>(statements.count.text, statements.count.values);
          return Number(row?.total_count ?? 0);
        }),
      );
    return pageOf(request, items, totalCount, nextCursor);
  } catch (error) {
    if (isMissingRelation(error)) return pageOf(request, [], 0);
    throw error;
  }
}

/** The envelope; `nextCursor` only while more rows follow (a member set to undefined would still be one). */
function pageOf<Item>(request: PageQuery, items: Item[], totalCount: number, nextCursor?: string): Page<Item> {
  const page: Page<Item> = { items, totalCount, page: request.page, pageSize: request.pageSize };
  if (nextCursor !== undefined) page.nextCursor = nextCursor;
  return page;
}
