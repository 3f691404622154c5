import type { HttpRoute } from '@hatchery/functions/routes';

export interface MatchedRoute {
  route: HttpRoute;
  routeKey: string;
  pathParameters: Record<string, string> | undefined;
}

interface CompiledRoute {
  route: HttpRoute;
  routeKey: string;
  pattern: RegExp;
  names: string[];
  /** API Gateway prefers literal segments over parameters, and parameters over a greedy tail. */
  rank: number;
}

function compile(route: HttpRoute): CompiledRoute {
  const names: string[] = [];
  let rank = 0;
  const source = route.path
    .split('/')
    .map((segment) => {
      const greedy = /^\{(\w+)\+\}$/.exec(segment);
      if (greedy) {
        names.push(greedy[1]!);
        return '(.+)';
      }
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) {
        names.push(param[1]!);
        rank += 1;
        return '([^/]+)';
      }
      rank += 2;
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { route, routeKey: `${route.method} ${route.path}`, pattern: new RegExp(`^${source}$`), names, rank };
}

/** Picks the route API Gateway would: the most specific path, an exact method over ANY. */
export function createRouter(routes: readonly HttpRoute[]) {
  const compiled = routes.map(compile).sort((a, b) => b.rank - a.rank);
  // A path of literal segments only is the most specific route there is for its method: found without trying the patterns.
  const literal = new Map<string, MatchedRoute>();
  for (const { route, routeKey, names } of compiled) {
    if (names.length === 0 && route.method !== 'ANY') literal.set(routeKey, { route, routeKey, pathParameters: undefined });
  }
  return (method: string, path: string): MatchedRoute | undefined => {
    const exact = literal.get(`${method} ${path}`);
    if (exact) return exact;
    for (const wanted of [method, 'ANY']) {
      for (const candidate of compiled) {
        if (candidate.route.method !== wanted) continue;
        const match = candidate.pattern.exec(path);
        if (!match) continue;
        const values = match.slice(1).map((value) => {
          try {
            return decodeURIComponent(value);
          } catch {
            return value;
          }
        });
        return {
          route: candidate.route,
          routeKey: candidate.routeKey,
          pathParameters: candidate.names.length ? Object.fromEntries(candidate.names.map((name, i) => [name, values[i]!])) : undefined,
        };
      }
    }
    return undefined;
  };
}
