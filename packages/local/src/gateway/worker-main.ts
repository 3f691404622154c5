import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { setEmfSink } from '@hatchery/platform/telemetry/metrics';
import { lambdaContext, loadHandler } from './lambda';
import type { WorkerReply, WorkerRequest } from './workers';

/**
 * In AWS the functions run on machines of their own, never taking CPU from
 * API Gateway, DynamoDB or the listener; here those are the main thread. A
 * worker therefore runs at a lower priority (nice 10), taking the cores the
 * main thread leaves idle. Linux only (a thread's id is in /proc); elsewhere
 * workers run at the main thread's priority.
 */
function yieldToMainThread(): void {
  try {
    setPriority(Number(readFileSync('/proc/thread-self/stat', 'utf8').split(' ', 1)[0]), 10);
  } catch {
    // Not Linux, or no /proc: equal priority.
  }
}

yieldToMainThread();

const port = parentPort!;
setEmfSink((document) => port.postMessage({ emf: document } satisfies WorkerReply));

/** Runs the invocations the pool sends, one at a time, each as Lambda would: the handler named in SST's notation, a context with a deadline. */
port.on('message', async ({ handler, functionName, event, timeoutMs }: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    const run = await loadHandler(handler);
    port.postMessage({ initialized: true } satisfies WorkerReply);
    reply = { ok: true, result: await run(event, lambdaContext(functionName, timeoutMs)) };
  } catch (error) {
    reply = { ok: false, error: error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) } };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies WorkerReply);
