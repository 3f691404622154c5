export interface CorsPolicy {
  origins: readonly string[];
  hostSuffixes: readonly string[];
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
