import { orderBySql } from '@hatchery/core/query/compile';
import { compilePage, type ListSource, type PageQuery, type ServerConditions, type Statement } from '@hatchery/core/query/page-query';

/**
 * A page as one round trip of an exact count over the whole read model (joins included) driving a lateral page
 * query by OFFSET, neither sharing its count nor reading by key: the bench's baseline for a list's page.
 */
export function countedOffsetPageStatement(source: ListSource, request: PageQuery, serverConditions?: ServerConditions): Statement {
  const { where, terms, params } = compilePage(source, request, serverConditions);
  const orderBy = orderBySql(terms);
  const from = source.joins ? `${source.table} ${source.joins}` : source.table;
  const limit = params.add(request.pageSize);
  const offset = params.add((request.page - 1) * request.pageSize);
  return {
    text: `SELECT counted.total_count, paged.* FROM (SELECT count(*) AS total_count FROM ${from}${where}) counted
    LEFT JOIN LATERAL (SELECT true AS row_present, ${source.select} FROM ${from}${where}
      ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}) paged ON true`,
    values: params.values,
  };
}
