import { AppError } from '@hatchery/core/errors';
import { getPaths } from '../get-paths';
import { notFound } from '../routes/catch-all';
import { httpHandler } from './handler';

const escapeRegExp = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
const pathPattern = (path: string) => new RegExp(`^${escapeRegExp(path).replace(/\{\w+\}/g, '[^/]+')}$`);
const getRoutes = getPaths.map(pathPattern);

/**
 * `/docs/` and the like: a GET whose path, without its trailing slash, a
 * route serves. The Location is relative (`../docs`), so it holds wherever
 * the API is mounted.
 */
function trailingSlashRedirect(method: string, path: string, query: string): string | undefined {
  if (method !== 'GET' || !path.endsWith('/') || path === '/') return undefined;
  const trimmed = path.replace(/\/+$/, '');
  if (!getRoutes.some((pattern) => pattern.test(trimmed))) return undefined;
  return `../${trimmed.split('/').at(-1)}${query ? `?${query}` : ''}`;
}

export const handler = httpHandler(notFound, async (_input, _context, event) => {
  const location = trailingSlashRedirect(event.requestContext.http.method, event.rawPath, event.rawQueryString);
  if (location) return { statusCode: 308, headers: { location, 'cache-control': 'no-store' }, body: '' };
  throw new AppError('notFound', 'No route matches this method and path.');
});
