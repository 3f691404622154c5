import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useLogDestination } from '@hatchery/platform/telemetry/logger';
import { startTestStack, type TestStack } from '../../support/stack';
import { restartBackoff } from '@hatchery/local/postgres';

/** The embedded PostgreSQL, killed, comes back by itself on the same data, and the service recovers. */
const lines: Array<{ message: string; attempt?: number; delayMs?: number; pid?: number }> = [];
let stack: TestStack;

beforeAll(async () => {
  useLogDestination(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  stack = await startTestStack({ env: { LOG_LEVEL: 'warn' } });
});
afterAll(() => stack?.stop());

const restarts = () => lines.filter((line) => line.message === 'PostgreSQL restarted');

/** The service's own pool recovers on its own; a request during the restart may be a 503, never anything else. */
async function untilServed(path: string): Promise<Response> {
  for (;;) {
    const response = await stack.get(path);
    if (response.status === 200) return response;
    expect(response.status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('restarts a killed PostgreSQL on the same data with a growing delay, a log line each time, and the API recovers', async () => {
  await stack.sql(`CREATE TABLE IF NOT EXISTS public.survives (value text); INSERT INTO public.survives VALUES ('kept')`);
  const before = (await untilServed('/transparency/sales?pageSize=1').then((response) => response.json())) as { totalCount: number };

  for (const attempt of [1, 2]) {
    const pid = stack.postgres!.pid!;
    const restarted = stack.postgres!.nextRestart();
    process.kill(pid, 'SIGKILL');
    await restarted;
    expect(stack.postgres!.pid).not.toBe(pid);
    const exited = lines.filter((line) => line.message.startsWith('PostgreSQL exited unexpectedly (signal SIGKILL)'));
    expect(exited.at(-1)).toMatchObject({ attempt, delayMs: restartBackoff.firstDelayMs * 2 ** (attempt - 1) });
    expect(restarts()).toHaveLength(attempt);
    expect(restarts().at(-1)).toMatchObject({ pid: stack.postgres!.pid });
  }

  expect(await stack.sql('SELECT value FROM public.survives')).toEqual([{ value: 'kept' }]);
  const after = (await (await untilServed('/transparency/sales?pageSize=1')).json()) as { totalCount: number };
  expect(after.totalCount).toBe(before.totalCount);
}, 60_000);

it('a deliberate stop is not undone, and start() brings it back', async () => {
  await stack.postgres!.stop();
  expect(stack.postgres!.pid).toBeUndefined();
  const count = restarts().length;
  expect((await stack.get('/editions')).status).toBe(503);
  await stack.postgres!.start();
  expect(restarts()).toHaveLength(count);
  expect((await untilServed('/editions')).status).toBe(200);
}, 60_000);
