import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

const stopGraceMs = 2_000;

/**
 * A real DynamoDB API (dynalite, in memory) on 127.0.0.1, in a worker thread:
 * its queries are CPU work that would otherwise hold up the gateway's event
 * loop, a forgeFulfilled's post behind a broadcast's shard reads. Resolves to
 * its endpoint URL.
 */
export async function startDynalite(port = 0): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const worker = new Worker(new URL('./dynamo-thread.mjs', import.meta.url), { workerData: { port } });
  const [reply] = (await once(worker, 'message')) as [{ port: number } | { error: string }];
  if ('error' in reply) {
    await worker.terminate();
    throw new Error(`dynalite did not start: ${reply.error}`);
  }
  return {
    endpoint: `http://127.0.0.1:${reply.port}`,
    stop: async () => {
      const exited = once(worker, 'exit');
      worker.postMessage('stop');
      // A client still holding a keep-alive socket would keep the server open.
      const timer = setTimeout(() => void worker.terminate(), stopGraceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
