import * as signalR from '@microsoft/signalr';
import type * as z from '@hatchery/platform/schema';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { hubPath } from '@hatchery/functions/routes/realtime';
import { problemSchema } from '@hatchery/functions/problem-schema';
import { responseOf, responses } from '@hatchery/functions/responses';
import { exampleWallet } from '@hatchery/functions/schemas';

interface SmokeOptions {
  baseUrl: string;
  /** An origin the stage allows (CORS_ORIGINS), for the preflight and the hub. */
  origin?: string;
  /** A token of the stage's identity provider, for /accounts/me. */
  token?: string;
  /** The wallet whose group the hub check subscribes to. */
  address: string;
  /** How long the hub check waits for an event. */
  eventTimeoutMs: number;
  /** Fail, rather than warn, when no event arrives in time (a quiet stage sends none). */
  requireEvent: boolean;
}

type Outcome = 'pass' | 'fail' | 'warn';

interface CheckResult {
  name: string;
  outcome: Outcome;
  ms: number;
  detail: string;
}

type Check = { name: string; run: () => Promise<{ outcome?: Outcome; detail: string }> };

class CheckFailed extends Error {}
const fail = (detail: string): never => {
  throw new CheckFailed(detail);
};

async function fetchJson(url: URL, init: RequestInit = {}): Promise<{ response: Response; body: unknown }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON; the check says what it expected.
  }
  return { response, body };
}

function shapeProblems(schema: z.ZodMiniType, body: unknown): string | undefined {
  const parsed = schema.safeParse(body);
  return parsed.success
    ? undefined
    : parsed.error.issues
        .slice(0, 3)
        .map((problem) => `${problem.path.join('.') || '(body)'}: ${problem.message}`)
        .join('; ');
}

/** A GET of every public JSON route of the route table, its answer checked against the route's response schema. */
function publicRouteChecks(options: SmokeOptions): Check[] {
  const routes = Object.entries<HttpRoute>(httpRoutes).flatMap(([name, route]) => {
    const schema = responseOf(name);
    return route.method === 'GET' && route.auth === 'none' && schema ? [{ route, schema }] : [];
  });
  return routes.map(({ route, schema }) => ({
    name: `GET ${route.path}`,
    run: async () => {
      const url = new URL(route.path.replace('{address}', options.address).replace(/^\//, ''), withSlash(options.baseUrl));
      const { response, body } = await fetchJson(url);
      if (response.status !== 200) fail(`${response.status} ${JSON.stringify(body).slice(0, 200)}`);
      const problems = shapeProblems(schema, body);
      if (problems) fail(`unexpected shape: ${problems}`);
      const items = (body as { items?: unknown[]; totalCount?: number }).items;
      return { detail: items ? `200, ${items.length} of ${(body as { totalCount: number }).totalCount}` : '200' };
    },
  }));
}

const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);

function otherChecks(options: SmokeOptions): Check[] {
  const base = withSlash(options.baseUrl);
  const checks: Check[] = [
    {
      name: 'GET /openapi.json',
      run: async () => {
        const { response, body } = await fetchJson(new URL('openapi.json', base));
        if (response.status !== 200 || typeof (body as { openapi?: unknown }).openapi !== 'string') fail(`${response.status}, not an OpenAPI document`);
        return { detail: `OpenAPI ${(body as { openapi: string }).openapi}` };
      },
    },
    {
      name: 'unknown path → problem+json 404',
      run: async () => {
        const { response, body } = await fetchJson(new URL('smoke-check/no-such-path', base));
        if (response.status !== 404) fail(`${response.status}`);
        if (!response.headers.get('content-type')?.startsWith('application/problem+json')) fail(`content-type ${response.headers.get('content-type')}`);
        const problems = shapeProblems(problemSchema, body);
        if (problems) fail(problems);
        return { detail: '404 problem+json' };
      },
    },
    {
      name: 'GET /accounts/me without a token → 401',
      run: async () => {
        const { response } = await fetchJson(new URL('accounts/me', base));
        if (response.status !== 401 || !response.headers.get('www-authenticate')?.startsWith('Bearer'))
          fail(`${response.status}, WWW-Authenticate ${response.headers.get('www-authenticate')}`);
        return { detail: '401 Bearer' };
      },
    },
  ];
  if (options.origin) {
    const origin = options.origin;
    checks.push({
      name: `CORS preflight from ${origin}`,
      run: async () => {
        const response = await fetch(new URL('accounts/me', base), {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
          signal: AbortSignal.timeout(15_000),
        });
        const allowed = response.headers.get('access-control-allow-origin');
        if (response.status >= 300 || allowed !== origin) fail(`${response.status}, Access-Control-Allow-Origin ${allowed ?? '(none)'}`);
        const headers = response.headers.get('access-control-allow-headers')?.toLowerCase() ?? '';
        if (!headers.includes('authorization')) fail(`Access-Control-Allow-Headers ${headers || '(none)'} lacks authorization`);
        return { detail: `${response.status}, origin allowed` };
      },
    });
  }
  if (options.token) {
    const token = options.token;
    checks.push({
      name: 'GET /accounts/me with the token',
      run: async () => {
        const { response, body } = await fetchJson(new URL('accounts/me', base), { headers: { authorization: `Bearer ${token}` } });
        if (response.status !== 200) fail(`${response.status} ${JSON.stringify(body).slice(0, 200)}`);
        const problems = shapeProblems(responses.getMe, body);
        if (problems) fail(`unexpected shape: ${problems}`);
        return { detail: `200, account ${(body as { id: string }).id}` };
      },
    });
  }
  checks.push({ name: 'hub: connect, subscribe, event', run: () => hubCheck(options) });
  return checks;
}

/** The stock SignalR client through the hub URL: negotiate, WebSocket, Subscribe, then any event within the timeout. */
async function hubCheck(options: SmokeOptions): Promise<{ outcome?: Outcome; detail: string }> {
  const hubUrl = new URL(hubPath.replace(/^\//, ''), withSlash(options.baseUrl)).href;
  const connection = new signalR.HubConnectionBuilder()
    .withUrl(hubUrl, { transport: signalR.HttpTransportType.WebSockets, ...(options.origin && { headers: { origin: options.origin } }) })
    .configureLogging(signalR.LogLevel.None)
    .build();
  const event = new Promise<string>((resolve) => {
    connection.on('marketChanged', (payload: unknown) => resolve(`marketChanged ${JSON.stringify(payload)}`));
    connection.on('forgeFulfilled', (payload: unknown) => resolve(`forgeFulfilled ${JSON.stringify(payload)}`));
  });
  try {
    await connection.start();
    await connection.invoke('Subscribe', options.address);
    const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), options.eventTimeoutMs).unref());
    const received = await Promise.race([event, timeout]);
    if (received) return { detail: `subscribed; ${received.slice(0, 120)}` };
    const detail = `subscribed; no event within ${options.eventTimeoutMs / 1000} s (a quiet stage sends none)`;
    if (options.requireEvent) fail(detail);
    return { outcome: 'warn', detail };
  } finally {
    await connection.stop().catch(() => undefined);
  }
}

export async function runSmoke(options: SmokeOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of [...publicRouteChecks(options), ...otherChecks(options)]) {
    const started = performance.now();
    try {
      const { outcome = 'pass', detail } = await check.run();
      results.push({ name: check.name, outcome, ms: performance.now() - started, detail });
    } catch (error) {
      results.push({
        name: check.name,
        outcome: 'fail',
        ms: performance.now() - started,
        detail: error instanceof CheckFailed ? error.message : String(error),
      });
    }
  }
  return results;
}

export function formatResults(results: readonly CheckResult[]): string {
  const width = Math.max(...results.map((result) => result.name.length));
  const lines = results.map(
    (result) => `${result.outcome.toUpperCase().padEnd(4)}  ${result.name.padEnd(width)}  ${result.ms.toFixed(0).padStart(6)} ms  ${result.detail}`,
  );
  const failed = results.filter((result) => result.outcome === 'fail').length;
  return [...lines, '', failed ? `${failed} of ${results.length} checks failed` : `all ${results.length} checks passed`].join('\n');
}

export const defaultAddress = exampleWallet;
