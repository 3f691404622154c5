import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';
import { ConcurrentInvokeStore } from './invoke-store';

type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;

const repositoryRoot = new URL('../../../../', import.meta.url);

const loaded = new Map<string, Promise<LambdaHandler>>();
const ready = new Map<string, LambdaHandler>();

// Declared when this runtime is loaded, before any invocation-scoped state is first used (it reads this once).
process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';

// Provided with the variable, as Lambda's runtime provides its own, before anything asks for it (the library and Powertools take
// the one provided): Powertools' invocation-scoped state (log keys, metrics) throws without it, even outside an invocation.
const runtime = ((globalThis as { awslambda?: { InvokeStore?: InvokeStoreBase } }).awslambda ??= {});
const store: InvokeStoreBase = (runtime.InvokeStore ??= new ConcurrentInvokeStore());

/**
 * The local gateway runs concurrent invocations in one process, as Lambda's
 * runtime does when AWS_LAMBDA_MAX_CONCURRENCY is set: each in its own invoke
 * store context, where Powertools keeps that invocation's metrics apart.
 */
export function invokeStore(): InvokeStoreBase {
  return store;
}

function inInvokeContext(fn: LambdaHandler, contexts: InvokeStoreBase): LambdaHandler {
  return (event, context) => contexts.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, () => fn(event, context));
}

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
      const invoke = inInvokeContext(fn as LambdaHandler, store);
      ready.set(reference, invoke);
      return invoke;
    });
    loaded.set(reference, handler);
  }
  return handler;
}

/** The handler `reference` names once loadHandler has imported it; a request then needs no wait for it. */
export function loadedHandler(reference: string): LambdaHandler | undefined {
  return ready.get(reference);
}

const noop = () => undefined;

/**
 * The context's clock, called unbound (Middy takes it off the context), so a closure over the deadline. Returned
 * from a call, not written in the context's literal: esbuild's keepNames (tsx here, as in SST's bundles) names a
 * function written there with a defineProperty, once per invocation.
 */
const remainingUntil = (deadline: number) => () => Math.max(0, deadline - Date.now());

/** A Lambda context good enough for Middy: a request id and a deadline. */
export function lambdaContext(functionName: string, timeoutMs = 30_000): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: remainingUntil(Date.now() + timeoutMs),
    done: noop,
    fail: noop,
    succeed: noop,
  };
}
