import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { hubPath } from '@hatchery/functions/routes/realtime';
import type { DeploySettings } from './settings';

/** AWS WAF counts a rate-based rule's requests over five minutes. */
const wafWindowSeconds = 300;

/** Headers CloudFront must key its cache on, so that no cached response ever reaches another caller or another origin. */
export const cacheKeyHeaders = ['authorization', 'origin'];

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** HTTP routes under the hub's path (negotiation), which must reach the HTTP API rather than the WebSocket API. */
export function hubHttpPrefixes(routes: readonly HttpRoute[]): string[] {
  const prefixes = routes.filter((route) => route.path.startsWith(`${hubPath}/`)).map((route) => route.path.split('/{')[0]!);
  return [...new Set(prefixes)];
}

/** The hub's origin for CloudFront (https, host only) and the rewrite from the hub's path to the API's stage. */
export function hubOrigin(webSocketUrl: string): { url: string; rewrite: { regex: string; to: string } } {
  const url = new URL(webSocketUrl);
  // `$` starts a pattern in a replacement string; `$$` is a literal one (the stage is `$default`).
  return { url: `https://${url.host}`, rewrite: { regex: `^${escapeRegex(hubPath)}$`, to: url.pathname.replaceAll('$', '$$$$') } };
}

/**
 * One base URL (CloudFront) for both APIs: the hub's path goes to the
 * WebSocket API, everything else to the HTTP API. Its WAF enforces the
 * per-client-IP limit (the local gateway's IP_RATE_LIMIT_PER_SECOND, over
 * WAF's five-minute window); the APIs' stage throttling caps the total.
 * WAF's managed rule sets stay off: the core set blocks clients without a
 * User-Agent and the SQL-injection set misreads filter expressions, which
 * never reach SQL as text anyway.
 */
export function createRouter(api: sst.aws.ApiGatewayV2, hub: sst.aws.ApiGatewayWebSocket, settings: DeploySettings): sst.aws.Router {
  const router = new sst.aws.Router('Router', {
    ...(settings.ipRequestsPerSecond > 0 && {
      waf: {
        rateLimitPerIp: settings.ipRequestsPerSecond * wafWindowSeconds,
        managedRules: { coreRuleSet: false, knownBadInputs: true, sqlInjection: false },
      },
    }),
    transform: {
      cachePolicy: (args) => {
        const headers = args.parametersInCacheKeyAndForwardedToOrigin.headersConfig;
        headers.headerBehavior = 'whitelist';
        headers.headers = { items: [...new Set([...(headers.headers?.items ?? []), ...cacheKeyHeaders])] };
      },
    },
  });
  router.route('/', api.url);
  for (const prefix of hubHttpPrefixes(Object.values<HttpRoute>(httpRoutes))) router.route(prefix, api.url);
  const origin = hub.url.apply(hubOrigin);
  router.route(
    hubPath,
    origin.apply((hubOrigin) => hubOrigin.url),
    origin.apply((hubOrigin) => ({ rewrite: hubOrigin.rewrite })),
  );
  return router;
}
