import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@hatchery/platform/telemetry/logger';
import type { LocalEndpoint } from './server';
import { FunctionError, type WorkerPool } from './workers';

/** Where Lambda's Invoke API is served (the SDK's path: POST {lambdaApiPath}/{name}/invocations). */
export const lambdaApiPath = '/2015-03-31/functions';

export interface LocalFunction {
  /** SST's notation: `packages/functions/src/x.handler`. */
  handler: string;
  timeoutMs: number;
  /** Lambda's maximumRetryAttempts for asynchronous invocations. */
  retries: number;
}

export interface LambdaApi {
  endpoint: LocalEndpoint;
  /** Resolves once every asynchronous invocation so far has finished, retries included. */
  settled(): Promise<void>;
  stats(): { queued: number; attempts: number; failedAttempts: number; abandoned: number };
}

function awsError(response: ServerResponse, status: number, type: string, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  response.end(JSON.stringify({ Type: 'User', message }));
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

/**
 * Lambda's Invoke API on the local gateway, so the listener invokes the
 * fan-out function with the real AWS SDK client here as in AWS. An `Event`
 * invocation is answered 202 at once and run in the worker pool; one that
 * fails is tried again, up to the function's `retries`, as Lambda retries
 * asynchronous invocations (at once here, where Lambda waits a minute or
 * two). `RequestResponse` answers the handler's result, or its error with
 * `X-Amz-Function-Error`, as Lambda does.
 */
export function lambdaApi(functions: Readonly<Record<string, LocalFunction>>, pool: WorkerPool, log: Logger): LambdaApi {
  const running = new Set<Promise<void>>();
  const counters = { queued: 0, attempts: 0, failedAttempts: 0, abandoned: 0 };

  const attempt = async (name: string, fn: LocalFunction, event: unknown) => {
    counters.attempts++;
    return pool.invoke({ handler: fn.handler, functionName: name, event, timeoutMs: fn.timeoutMs });
  };

  async function runAsync(name: string, fn: LocalFunction, event: unknown): Promise<void> {
    for (let tries = 0; ; tries++) {
      try {
        await attempt(name, fn, event);
        return;
      } catch (error) {
        counters.failedAttempts++;
        if (tries >= fn.retries) {
          counters.abandoned++;
          log.error({ err: error, functionName: name, tries: tries + 1 }, 'asynchronous invocation failed every attempt');
          return;
        }
        log.warn({ err: error, functionName: name }, 'asynchronous invocation failed; retrying');
      }
    }
  }

  const endpoint: LocalEndpoint = async (request, response, url) => {
    const match = /^\/([^/]+)\/invocations$/.exec(url.pathname.slice(lambdaApiPath.length));
    const name = match ? decodeURIComponent(match[1]!) : undefined;
    const fn = name === undefined ? undefined : Object.hasOwn(functions, name) ? functions[name] : undefined;
    if (request.method !== 'POST' || !name || !fn) {
      request.resume();
      awsError(response, 404, 'ResourceNotFoundException', `Function not found: ${name ?? url.pathname}`);
      return;
    }
    let event: unknown;
    try {
      event = await readJson(request);
    } catch {
      awsError(response, 400, 'InvalidRequestContentException', 'Could not parse request body into json.');
      return;
    }
    const type = request.headers['x-amz-invocation-type'] ?? 'RequestResponse';
    if (type === 'Event') {
      counters.queued++;
      const run = runAsync(name, fn, event);
      running.add(run);
      void run.finally(() => running.delete(run));
      response.writeHead(202);
      response.end();
      return;
    }
    if (type !== 'RequestResponse') {
      awsError(response, 400, 'InvalidParameterValueException', `Invocation type ${String(type)} is not served locally.`);
      return;
    }
    try {
      const result = await attempt(name, fn, event);
      response.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' });
      response.end(JSON.stringify(result ?? null));
    } catch (error) {
      counters.failedAttempts++;
      const failure = error instanceof FunctionError ? error : new FunctionError('Error', String(error));
      response.writeHead(200, { 'content-type': 'application/json', 'x-amz-function-error': 'Unhandled', 'x-amz-executed-version': '$LATEST' });
      response.end(JSON.stringify({ errorType: failure.errorType, errorMessage: failure.message }));
    }
  };

  return {
    endpoint,
    async settled() {
      while (running.size) await Promise.all(running);
    },
    stats: () => ({ ...counters }),
  };
}
