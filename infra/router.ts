import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { hubPath } from '@hatchery/functions/routes/realtime';
import { originVerifyHeader } from '@hatchery/functions/origin-verify';
import type { Secrets } from './secrets';
import type { DeploySettings } from './settings';

/** AWS WAF counts a rate-based rule's requests over five minutes. */
const wafWindowSeconds = 300;

/** Headers CloudFront must key its cache on, so that no cached response ever reaches another caller or another origin. */
const cacheKeyHeaders = ['authorization', 'origin'];

/**
 * The error statuses CloudFront would otherwise cache for its default error
 * TTL (10 s): every one it lets a distribution configure. A 503 that lasted a
 * second must not be served from the edge for ten.
 */
const uncachedErrorStatuses = [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504];

/** HSTS for a year; subdomains are the platform team's to decide, so they are left out. */
const hstsMaxAgeSeconds = 365 * 24 * 60 * 60;

/** The paths the route table exempts from the per-IP limit (`ipRateLimited: false`): literal paths, matched exactly. */
function rateLimitExemptPaths(routes: readonly HttpRoute[]): string[] {
  const paths = [...new Set(routes.filter((route) => route.ipRateLimited === false).map((route) => route.path))];
  const templated = paths.find((path) => path.includes('{'));
  if (templated) throw new Error(`${templated}: only a literal path can be exempt from the WAF rate rule`);
  return paths;
}

/**
 * The rate rule's scope-down: every request but those to the exempt paths
 * (GET /health), so a monitor polling it never uses up a client's allowance
 * nor is blocked itself. The Router's `waf` args have no scope-down.
 */
function exemptFromRateLimit(paths: readonly string[]): aws.types.input.wafv2.WebAclRuleStatementRateBasedStatementScopeDownStatement | undefined {
  const exactly = (path: string): aws.types.input.wafv2.WebAclRuleStatement => ({
    byteMatchStatement: {
      fieldToMatch: { uriPath: {} },
      positionalConstraint: 'EXACTLY',
      searchString: path,
      textTransformations: [{ priority: 0, type: 'NONE' }],
    },
  });
  if (!paths.length) return undefined;
  return { notStatement: { statements: [paths.length === 1 ? exactly(paths[0]!) : { orStatement: { statements: paths.map(exactly) } }] } };
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** HTTP routes under the hub's path (negotiation), which must reach the HTTP API rather than the WebSocket API. */
function hubHttpPrefixes(routes: readonly HttpRoute[]): string[] {
  const prefixes = routes.filter((route) => route.path.startsWith(`${hubPath}/`)).map((route) => route.path.split('/{')[0]!);
  return [...new Set(prefixes)];
}

/** The hub's origin for CloudFront (https, host only) and the rewrite from the hub's path to the API's stage. */
function hubOrigin(webSocketUrl: string): { url: string; rewrite: { regex: string; to: string } } {
  const url = new URL(webSocketUrl);
  // `$` starts a pattern in a replacement string; `$$` is a literal one (the stage is `$default`).
  return { url: `https://${url.host}`, rewrite: { regex: `^${escapeRegex(hubPath)}$`, to: url.pathname.replaceAll('$', '$$$$') } };
}

/**
 * One base URL (CloudFront) for both APIs: the hub's path goes to the
 * WebSocket API, everything else to the HTTP API. Its WAF enforces the
 * per-client-IP limit (the local gateway's IP_RATE_LIMIT_PER_SECOND, over
 * WAF's five-minute window) on every path but /health; the APIs' stage
 * throttling caps the total.
 * WAF's managed rule sets stay off: the core set blocks clients without a
 * User-Agent and the SQL-injection set misreads filter expressions, which
 * never reach SQL as text anyway.
 *
 * Every request it forwards carries the stage's origin-verification secret,
 * which the functions require, so the APIs' own endpoints cannot be used to
 * go around the WAF and the HSTS policy. Error responses are never cached.
 */
export function createRouter(api: sst.aws.ApiGatewayV2, hub: sst.aws.ApiGatewayWebSocket, secrets: Secrets, settings: DeploySettings): sst.aws.Router {
  const securityHeaders = new aws.cloudfront.ResponseHeadersPolicy('RouterSecurityHeaders', {
    comment: 'HSTS and nosniff on every response, including the ones API Gateway answers itself',
    securityHeadersConfig: {
      strictTransportSecurity: { accessControlMaxAgeSec: hstsMaxAgeSeconds, includeSubdomains: false, preload: false, override: true },
      contentTypeOptions: { override: true },
    },
  });
  const router = new sst.aws.Router('Router', {
    waf:
      settings.ipRequestsPerSecond > 0
        ? { rateLimitPerIp: settings.ipRequestsPerSecond * wafWindowSeconds, managedRules: { coreRuleSet: false, knownBadInputs: true, sqlInjection: false } }
        : undefined,
    edge: {
      viewerRequest: {
        injection: $interpolate`event.request.headers["${originVerifyHeader}"] = { value: "${secrets.originVerify.properties.value}" };`,
      },
    },
    transform: {
      waf: (args) => {
        const scopeDownStatement = exemptFromRateLimit(rateLimitExemptPaths(Object.values<HttpRoute>(httpRoutes)));
        args.rules = $output(args.rules ?? []).apply((rules) =>
          rules.map((rule) =>
            rule.statement.rateBasedStatement
              ? { ...rule, statement: { rateBasedStatement: { ...rule.statement.rateBasedStatement, scopeDownStatement } } }
              : rule,
          ),
        );
      },
      cachePolicy: (args) => {
        args.parametersInCacheKeyAndForwardedToOrigin = $output(args.parametersInCacheKeyAndForwardedToOrigin).apply((parameters) => ({
          ...parameters,
          headersConfig: {
            headerBehavior: 'whitelist',
            headers: { items: [...new Set([...(parameters.headersConfig.headers?.items ?? []), ...cacheKeyHeaders])] },
          },
        }));
      },
      cdn: (args) => {
        args.customErrorResponses = uncachedErrorStatuses.map((errorCode) => ({ errorCode, errorCachingMinTtl: 0 }));
        args.defaultCacheBehavior = $output(args.defaultCacheBehavior).apply((behavior) => ({ ...behavior, responseHeadersPolicyId: securityHeaders.id }));
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
