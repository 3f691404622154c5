import { afterAll, describe, expect, it } from 'vitest';
import { FunctionError, workerPool } from '@hatchery/local/gateway/workers';

/**
 * The local Lambda service's execution environments, in real worker threads, against functions slow on purpose:
 * one whose import takes 2 s, one whose handler runs 2 s, each given a timeout of 1 s.
 */
const pool = workerPool(2);
afterAll(() => pool.close());

describe.concurrent('an invocation in the local Lambda service', () => {
  it("counts its timeout from the handler's start, as Lambda leaves the module's import to the Init phase", async () => {
    const answer = pool.invoke({ handler: 'test/unit/local/handlers/slow-init.handler', functionName: 'slow-init', event: {}, timeoutMs: 1_000 });
    await expect(answer).resolves.toBe('answered');
  });

  it('is ended at its timeout whatever the handler is doing', async () => {
    const answer = pool.invoke({ handler: 'test/unit/local/handlers/slow-run.handler', functionName: 'slow-run', event: {}, timeoutMs: 1_000 });
    await expect(answer).rejects.toBeInstanceOf(FunctionError);
    await expect(answer).rejects.toMatchObject({ errorType: 'Sandbox.Timedout' });
  });
});

describe.concurrent('the local Lambda service’s execution environments', () => {
  const instance = (pool: ReturnType<typeof workerPool>, waitMs = 0) =>
    pool.invoke({ handler: 'test/unit/local/handlers/instance.handler', functionName: 'instance', event: { waitMs } }) as Promise<string>;

  it('starts each only once an invocation needs it, up to the pool’s size, and keeps it for the next', async () => {
    const lazy = workerPool(2);
    try {
      expect(lazy.started).toBe(0);
      const first = await instance(lazy);
      expect(lazy.started).toBe(1);
      expect(await instance(lazy)).toBe(first);
      // Three at once: the started worker takes one, and the two waiting start one more, the pool's size.
      const together = Promise.all([instance(lazy, 300), instance(lazy, 300), instance(lazy, 300)]);
      expect(lazy.started).toBe(2);
      expect(await together).toHaveLength(3);
      expect(lazy.started).toBe(2);
    } finally {
      await lazy.close();
    }
  });

  it('starts afresh after a recycle or a timeout: the ended worker’s state is gone', async () => {
    const lazy = workerPool(1);
    try {
      const first = await instance(lazy);
      await lazy.recycle();
      expect(lazy.started).toBe(0);
      const second = await instance(lazy);
      expect(second).not.toBe(first);
      await expect(
        lazy.invoke({ handler: 'test/unit/local/handlers/slow-run.handler', functionName: 'slow-run', event: {}, timeoutMs: 200 }),
      ).rejects.toMatchObject({ errorType: 'Sandbox.Timedout' });
      const third = await instance(lazy);
      expect(third).not.toBe(second);
      expect(lazy.started).toBe(1);
    } finally {
      await lazy.close();
    }
  });
});
