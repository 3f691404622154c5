import http from 'node:http';
import pg from 'pg';

/**
 * The least a server can do to answer a paged read: node:http and a pg pool
 * running the statements Hatchery runs for the same request (the page, and
 * its count shared for the count cache's lifetime while more rows follow),
 * the rows as JSON. The throughput section's baseline, in a process of its own.
 * With `holdMicros`, it holds its thread that much longer on each page's
 * rows, by the wall clock (Linux counts a thread's CPU only to the
 * scheduler's tick, too coarse to spin on): the section's calibration, a
 * server known to cost more a request, by as much as /proc then reads.
 */
process.once('message', ({ databaseUrl, concurrency, countTtlMs, routes, holdMicros = 0 }) => {
  const hold = () => {
    const until = performance.now() + holdMicros / 1000;
    while (performance.now() < until);
  };
  const pool = new pg.Pool({ connectionString: databaseUrl, max: concurrency });
  pool.on('error', () => undefined);
  const counts = new Map();
  const countOf = (route) => {
    const kept = counts.get(route.path);
    if (kept && performance.now() < kept.expiresAt) return kept.count;
    const count = pool.query(route.count.text, route.count.values).then(({ rows }) => Number(rows[0].total_count));
    counts.set(route.path, { count, expiresAt: performance.now() + countTtlMs });
    return count;
  };
  const byPath = new Map(routes.map((route) => [route.path, route]));
  const server = http.createServer(async (request, response) => {
    const route = byPath.get(request.url);
    if (!route) {
      response.writeHead(404).end();
      return;
    }
    try {
      const { rows } = await pool.query(route.page.text, route.page.values);
      if (holdMicros > 0) hold();
      const more = rows.length > route.pageSize;
      const items = more ? rows.slice(0, route.pageSize) : rows;
      for (const row of items) for (const key of route.keyColumns) delete row[key];
      const totalCount = more ? await countOf(route) : items.length;
      const body = JSON.stringify({ items, totalCount, page: 1, pageSize: route.pageSize });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } catch (error) {
      response.writeHead(500).end(String(error));
    }
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
});
