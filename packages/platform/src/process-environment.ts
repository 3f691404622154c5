let copied = false;

/**
 * Makes `process.env` a plain object holding the same variables, once per
 * process. Each read of Node's own `process.env` calls into its C++ side,
 * and Powertools reads AWS_LAMBDA_MAX_CONCURRENCY there at
 * every access of its invocation-scoped state, to learn whether invocations
 * share the instance: dozens of times a request. A Lambda instance's
 * environment is fixed when it starts, and what changes it afterwards (the
 * runtime's trace header for each invocation) writes through `process.env`,
 * so the copy reads what the original would; child processes and workers
 * take their environment from it as well.
 */
export function copyProcessEnvironment(): void {
  if (copied) return;
  copied = true;
  process.env = { ...process.env };
}
