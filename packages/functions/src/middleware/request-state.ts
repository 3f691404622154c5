/** What the state lives on: Middy's request, whose `internal` is each request's own. */
interface WithInternal {
  internal: object;
}

/**
 * A middleware's own state for one request, kept on Middy's `request.internal`
 * under a key of its own: a WeakMap keyed by the request would make each
 * request an ephemeron, which every garbage collection traces apart, and a
 * busy instance makes thousands of them a second.
 */
export function requestState<T>(name: string): {
  set(request: WithInternal, value: T): void;
  get(request: WithInternal): T | undefined;
} {
  const key = Symbol(name);
  return {
    set: (request, value) => {
      (request.internal as Record<symbol, unknown>)[key] = value;
    },
    get: (request) => (request.internal as Record<symbol, unknown>)[key] as T | undefined,
  };
}
