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
