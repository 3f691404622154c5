import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';

export type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;

export const repositoryRoot = new URL('../../../../', import.meta.url);

const loaded = new Map<string, Promise<LambdaHandler>>();

/** Imports a handler named in SST's notation (`packages/functions/src/x.handler`), once per process, as Lambda would. */
export function loadHandler(reference: string): Promise<LambdaHandler> {
  let handler = loaded.get(reference);
  if (!handler) {
    const dot = reference.lastIndexOf('.');
    const file = new URL(`${reference.slice(0, dot)}.ts`, repositoryRoot);
    const exportName = reference.slice(dot + 1);
    handler = import(pathToFileURL(file.pathname).href).then((module: Record<string, unknown>) => {
      const fn = module[exportName];
      if (typeof fn !== 'function') throw new Error(`${reference} does not export a function`);
      return fn as LambdaHandler;
    });
    loaded.set(reference, handler);
  }
  return handler;
}

/** A Lambda context good enough for Middy: a request id and a deadline. */
export function lambdaContext(functionName: string, timeoutMs = 30_000): Context {
  const deadline = Date.now() + timeoutMs;
  const awsRequestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
