import { availableParallelism } from 'node:os';
import { SHARE_ENV, Worker } from 'node:worker_threads';
import { emitEmf, type EmfSink } from '@hatchery/platform/telemetry/metrics';
import { connectionShards } from '@hatchery/core/realtime/connections';

export interface WorkerRequest {
  handler: string;
  functionName: string;
  event: unknown;
  timeoutMs: number;
}

/**
 * A worker's answer to its one invocation, its first message once it can take one, the end of an invocation's init
 * (its handler imported), or an EMF document a handler published.
 */
export type WorkerReply =
  | { ok: true; result: unknown }
  | { ok: false; error: { name: string; message: string } }
  | { ready: true }
  | { initialized: true }
  | { emf: Parameters<EmfSink>[0] };

/**
 * Lambda's Init phase (the handler's module imported) is not the invocation's: it has 10 seconds of its own, and one
 * slower than that is run again within the invocation's timeout. Here init is bounded by their sum, and the
 * function's timeout counts from the handler's start, so a slow import on a busy machine is not taken for a handler
 * that ran out of time.
 */
const initMs = 10_000;

/** A failed invocation, as Lambda reports it: the handler's error name and message. */
export class FunctionError extends Error {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
    this.name = 'FunctionError';
  }
}

export interface WorkerPool {
  readonly size: number;
  /** The workers started and not yet ended: none until an invocation needs one. */
  readonly started: number;
  /** Runs one invocation in the next free worker; rejects with a FunctionError when the handler throws or its worker dies. */
  invoke(invocation: { handler: string; functionName: string; event: unknown; timeoutMs?: number }): Promise<unknown>;
  /**
   * Ends every worker, as a deploy replaces a function's environments: what the handlers kept between invocations
   * (a fan-out pacer's lessons, their clients) goes, and the next invocation starts a fresh one. Only when idle: it
   * throws while an invocation runs or waits.
   */
  recycle(): Promise<void>;
  close(): Promise<void>;
}

/** As many workers as there are shards, or cores when fewer: more threads than cores only share them. */
const defaultWorkers = () => Math.min(connectionShards, availableParallelism());

interface Pending {
  request: WorkerRequest;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** The invocation it runs, if any: one at a time, as a Lambda execution environment. */
  current?: Pending;
  /** Ends the invocation at its timeout, as Lambda does whatever the code is doing. */
  timer?: NodeJS.Timeout;
}

/**
 * Lambda's execution environments on one machine: worker threads that import
 * the handlers as the local gateway does, each running one invocation at a
 * time while the others wait their turn, and each with its own copy of every
 * module, so a handler's clients and caches are per worker as they are per
 * Lambda instance. They share this process's environment unless given one of
 * their own.
 */
export function workerPool(size = defaultWorkers(), env: NodeJS.ProcessEnv | typeof SHARE_ENV = SHARE_ENV): WorkerPool {
  let closing = false;
  const script = new URL('./worker.mjs', import.meta.url);
  const queue: Pending[] = [];

  function dispatch(): void {
    for (const slot of slots) {
      if (!slot?.ready || slot.current || !queue.length) continue;
      const pending = queue.shift()!;
      slot.current = pending;
      slot.timer = setTimeout(() => timedOut(slot, pending), initMs + pending.request.timeoutMs);
      slot.worker.postMessage(pending.request);
    }
    // What still waits gets a worker of its own, up to the pool's size, counting those not ready: one starting will
    // take an invocation once ready, and one ending empties its slot and dispatches again on its exit.
    let starting = slots.filter((slot) => slot && !slot.ready).length;
    for (let index = 0; index < slots.length && queue.length > starting && !closing; index++) {
      if (slots[index]) continue;
      slots[index] = start();
      starting++;
    }
  }

  /** Lambda's timeout: the environment is torn down mid-invocation (the worker, and whatever it was doing), and the caller told `Sandbox.Timedout`. */
  function timedOut(slot: Slot, pending: Pending): void {
    if (slot.current !== pending) return;
    slot.current = undefined;
    slot.ready = false;
    pending.reject(new FunctionError('Sandbox.Timedout', `Task timed out after ${(pending.request.timeoutMs / 1000).toFixed(2)} seconds`));
    void slot.worker.terminate();
  }

  function start(): Slot {
    const worker = new Worker(script, { env });
    const slot: Slot = { worker, ready: false };
    worker.on('message', (reply: WorkerReply) => {
      // A handler's metrics go where this process's go (the local stack's /metrics), as Lambda's output goes to CloudWatch.
      if ('emf' in reply) return emitEmf(reply.emf);
      if ('initialized' in reply) {
        const pending = slot.current;
        clearTimeout(slot.timer);
        if (pending) slot.timer = setTimeout(() => timedOut(slot, pending), pending.request.timeoutMs);
        return;
      }
      if ('ready' in reply) {
        slot.ready = true;
      } else {
        const done = slot.current;
        slot.current = undefined;
        clearTimeout(slot.timer);
        if (reply.ok) done?.resolve(reply.result);
        else done?.reject(new FunctionError(reply.error.name, reply.error.message));
      }
      dispatch();
    });
    // A worker that dies takes its invocation with it, as a crashed Lambda instance does; the next invocation that
    // finds no free worker starts a fresh one.
    worker.on('exit', (code) => {
      clearTimeout(slot.timer);
      slot.current?.reject(new FunctionError('Runtime.ExitError', `the worker exited with code ${code}`));
      slot.current = undefined;
      const index = slots.indexOf(slot);
      if (index >= 0) slots[index] = undefined;
      dispatch();
    });
    worker.on('error', () => undefined);
    return slot;
  }

  // Each started when an invocation needs it, as Lambda starts an execution environment: a stack that never invokes
  // a function spends nothing on its workers.
  const slots: (Slot | undefined)[] = Array.from({ length: Math.max(1, size) }, () => undefined);

  return {
    size: slots.length,
    get started() {
      return slots.filter(Boolean).length;
    },
    invoke({ handler, functionName, event, timeoutMs = 30_000 }) {
      return new Promise((resolve, reject) => {
        queue.push({ request: { handler, functionName, event, timeoutMs }, resolve, reject });
        dispatch();
      });
    },
    async recycle() {
      if (closing) throw new Error('the worker pool is closed');
      if (queue.length || slots.some((slot) => slot?.current)) throw new Error('the worker pool is busy: recycle it once its invocations are done');
      // Each worker's exit empties its slot (start's exit handler), before terminate resolves: the next invocation starts afresh.
      await Promise.all(
        slots.map((slot) => {
          if (slot) slot.ready = false;
          return slot?.worker.terminate();
        }),
      );
    },
    async close() {
      closing = true;
      for (const pending of queue.splice(0)) pending.reject(new FunctionError('Runtime.ExitError', 'the worker pool closed'));
      await Promise.all(slots.map((slot) => slot?.worker.terminate()));
    },
  };
}
