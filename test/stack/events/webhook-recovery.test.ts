import { type ChildProcess, execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetterQueue, jobSchema, type DeliveryJob } from '@hatchery/core/webhooks/delivery';
import { demoSizes } from '@hatchery/local/demo-data';
import { indexer, waitFor, wallet } from '../realtime/support';
import { buildListener, listenerTask } from '../../support/listener-task';
import { startTestStack, type TestStack } from '../../support/stack';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

let stack: TestStack;
let writes: ReturnType<typeof indexer>;
let dir: string;
const received: Array<{ id: string; body: string }> = [];
/** Whether the receiver holds a request open (true) rather than accepting it: the test's hook into "mid-delivery". */
let onRequest: () => boolean = () => false;
const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    received.push({ id: String(request.headers['webhook-id']), body });
    if (!onRequest()) response.writeHead(204).end();
  });
});
const children: ChildProcess[] = [];

let bundle: string;
/** A listener task of the stack's, with the webhook endpoints given, killed after the tests if still running. */
function task(endpoints: string) {
  const started = listenerTask(bundle, stack, { WEBHOOK_ENDPOINTS: endpoints });
  children.push(started.child);
  return started;
}

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  dir = await mkdtemp(join(tmpdir(), 'hatchery-webhooks-'));
  bundle = await buildListener(dir);
  stack = await startTestStack({ demoData: demoSizes.demo, listener: false });
  writes = indexer(stack);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await writes?.end();
  await stack?.stop();
  server.close();
  await rm(dir, { recursive: true, force: true });
});

const endpoints = () =>
  JSON.stringify([
    { name: 'game', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, types: ['forge.fulfilled'], finality: 'latest', secrets: [secret] },
  ]);

describe('a webhook delivery', () => {
  it('survives SIGKILL of the listener task that holds it: another task delivers it, with the same id', async () => {
    const first = task(endpoints());
    const standby = task(endpoints());
    await waitFor(async () => (await stack.sql('SELECT 1 FROM hatchery.webhook_dispatch')).length === 1, 'the endpoint placed in the log', 30_000);
    // The receiver holds the first attempt open; both tasks work the queue, so whichever took the job, both die mid-delivery.
    onRequest = () => received.length === 1;
    const fulfilment = await writes.fulfilFor(wallet(21));
    await waitFor(() => received.length === 1, 'the first attempt');
    first.child.kill('SIGKILL');
    standby.child.kill('SIGKILL');
    const restarted = task(endpoints());
    await waitFor(() => received.length === 2, 'the delivery, by the restarted task', 60_000);
    expect(received[1]!.id).toBe(received[0]!.id);
    expect(JSON.parse(received[1]!.body).payload.requestId).toBe(fulfilment.requestId);
    restarted.child.kill('SIGTERM');
    await once(restarted.child, 'exit');
  }, 90_000);

  it('dead-lettered, is counted by `npm run webhooks -- dead` and sent again by `redeliver`', async () => {
    const leader = task(endpoints());
    await waitFor(() => leader.logged.some((line) => line.includes('"listener is leading"')), 'the task to lead', 30_000);
    const boss = new PgBoss({ connectionString: stack.databaseUrl, schema: jobSchema, max: 2, supervise: false, schedule: false });
    await boss.start();
    const event = {
      id: 'evt_424242',
      position: 424242,
      type: 'forge.fulfilled' as const,
      chainId: 31337,
      blockNumber: '1',
      entity: '9',
      wallets: [],
      createdAt: new Date().toISOString(),
      payload: {},
    };
    await boss.send(deadLetterQueue('game'), { event, firstAttemptAt: new Date(0).toISOString(), failures: 40 } satisfies DeliveryJob);
    await boss.stop({ graceful: false });
    const run = (...args: string[]) =>
      promisify(execFile)('npm', ['run', '-s', 'webhooks', '--', ...args], { env: { ...process.env, DATABASE_URL: stack.databaseUrl }, cwd: process.cwd() });
    expect((await run('dead')).stdout).toBe('game: 1 dead-lettered\n');
    expect((await run('redeliver', '--endpoint', 'game')).stdout).toBe('game: 1 dead-lettered delivery queued again, each with a fresh retry window\n');
    await waitFor(() => received.some((each) => each.id === 'evt_424242'), 'the delivery sent again', 20_000);
    expect((await run('dead')).stdout).toBe('No dead-lettered deliveries.\n');
    await expect(run('redeliver')).rejects.toMatchObject({ code: 2 });
    leader.child.kill('SIGTERM');
    await once(leader.child, 'exit');
  }, 90_000);
});
