import { requestsSettings } from '@hatchery/platform/config/requests';

interface CorsPolicy {
  origins: readonly string[];
  hostSuffixes: readonly string[];
}

/** The policy `CORS_ORIGINS` and `CORS_ALLOWED_HOST_SUFFIXES` configure. */
export function corsPolicy(): CorsPolicy {
  const { CORS_ORIGINS, CORS_ALLOWED_HOST_SUFFIXES } = requestsSettings();
  return { origins: CORS_ORIGINS, hostSuffixes: CORS_ALLOWED_HOST_SUFFIXES };
}

/**
 * An origin is allowed when it equals a configured origin, or its host equals
 * or ends with a configured suffix (`.example.com` allows `example.com` and
 * `a.example.com`, never `badexample.com`).
 */
export function isOriginAllowed(origin: string, policy: CorsPolicy): boolean {
  if (policy.origins.includes(origin)) return true;
  let host: string;
  try {
    const url = new URL(origin);
    if (url.origin !== origin) return false;
    host = url.hostname.toLowerCase();
  } catch {
    return false;
  }
  return policy.hostSuffixes.some((raw) => {
    const suffix = raw.toLowerCase().replace(/^\.+/, '');
    return suffix !== '' && (host === suffix || host.endsWith(`.${suffix}`));
  });
}

/**
 * Whether a browser page may use the hub (negotiate and the WebSocket alike):
 * no Origin (not a browser page), the API's own host, or an origin the CORS
 * settings allow (docs/deploying.md: other origins are blocked).
 */
export function isRequestOriginAllowed(origin: string | undefined, host: string | undefined, policy: CorsPolicy): boolean {
  if (!origin) return true;
  try {
    if (host && new URL(origin).host === host) return true;
  } catch {
    return false;
  }
  return isOriginAllowed(origin, policy);
}
