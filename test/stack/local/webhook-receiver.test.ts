import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookHeaders } from '@hatchery/core/webhooks/signature';
import { freePort } from '@hatchery/local/ports';
import { commandLines, docBlock, jsonValues, onStack, runShell, where } from '../../support/docs';
import { ctrlC, terminals, until, type Started } from '../../support/terminal';

/**
 * docs/webhooks.md's walkthrough as a reader runs it, each line in a terminal
 * of its own: examples/webhook-receiver.mjs, `npm start` with the endpoint
 * that points at it, and `npm run simulate`; then the page's replay and
 * dead-letter commands against that stack. The receiver's port and the
 * stack's port and data dir are the test's own, so it runs beside a reader's
 * stack.
 */
const { terminal, closeAll } = terminals();
const wallet1 = '0x0000000000000000000000000000000000000001';

let dataDir: string;
let env: Record<string, string>;
let stackUrl: string;
let receiverUrl: string;
let secret: string;
let receiver: Started;
let start: Started;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-webhooks-'));
  await chmod(dataDir, 0o755);
  env = { PORT: String(await freePort()), HATCHERY_DATA_DIR: dataDir, DATABASE_URL: '', DYNAMODB_ENDPOINT: '' };
  const block = docBlock('webhook-try-it');
  const [receive, npmStart] = commandLines(block);
  expect(receive, where(block)).toMatch(/^WEBHOOK_SECRET=whsec_\S+ PORT=4000 node examples\/webhook-receiver\.mjs$/);
  expect(npmStart, where(block)).toContain('"url":"http://127.0.0.1:4000/"');
  secret = /WEBHOOK_SECRET=(\S+)/.exec(receive!)![1]!;
  const port = String(await freePort());
  receiverUrl = `http://127.0.0.1:${port}/`;
  receiver = terminal(receive!.replace('PORT=4000', `PORT=${port}`), env);
  await until(() => receiver.output().includes(`receiving webhooks on ${receiverUrl}`), 'the receiver', 30_000, receiver.output);
  start = terminal(`${npmStart!.replaceAll('127.0.0.1:4000', `127.0.0.1:${port}`)}`, env);
  await until(() => /Hatchery is running at (\S+)/.test(start.output()) || start.child.exitCode !== null, 'npm start', 110_000, start.output);
  stackUrl = /Hatchery is running at (\S+)/.exec(start.output())?.[1] ?? '';
  expect(stackUrl, start.output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
}, 150_000);

afterAll(async () => {
  await closeAll();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 60_000);

/** The receiver's lines for verified events: position, type, payload. */
const printed = () =>
  receiver
    .output()
    .split('\n')
    .flatMap((line) => {
      const match = /^(\d+) ([a-z.]+) (\{.*\})$/.exec(line);
      return match ? [{ position: Number(match[1]), type: match[2]!, payload: JSON.parse(match[3]!) as Record<string, unknown> }] : [];
    });

describe(`docs/webhooks.md's walkthrough (${where(docBlock('webhook-try-it'))})`, () => {
  it('the receiver prints each fulfilment and sale simulate writes, verified with the endpoint’s secret; npm start shows no secret', async () => {
    const [, , simulate] = commandLines(docBlock('webhook-try-it'));
    expect(simulate).toBe('npm run simulate');
    const indexer = terminal(simulate!, env);
    await until(
      () => printed().some((event) => event.type === 'forge.fulfilled') && printed().some((event) => event.type === 'sale.completed'),
      'a forge.fulfilled and a sale.completed at the receiver',
      60_000,
      () => receiver.output() + indexer.output(),
    );
    await ctrlC(indexer);
    const fulfilled = printed().find((event) => event.type === 'forge.fulfilled')!;
    expect(fulfilled.payload).toMatchObject({ requestId: expect.stringMatching(/^\d+$/), buyer: wallet1, tokenId: expect.stringMatching(/^\d+$/) });
    expect(printed().every((event) => event.type === 'forge.fulfilled' || event.type === 'sale.completed')).toBe(true);
    expect(receiver.output()).not.toContain('refused');
    expect(start.output()).toContain('WEBHOOK_ENDPOINTS=(set)');
    expect(start.output()).not.toContain(secret);
  }, 90_000);

  it('the receiver answers 204 to a delivery sent again and prints it once, and 400 to a changed body or an old timestamp', async () => {
    const fulfilled = printed().find((event) => event.type === 'forge.fulfilled');
    expect(fulfilled, 'the walkthrough’s fulfilment').toBeDefined();
    const page = (await (await fetch(`${stackUrl}/events?type=forge.fulfilled&pageSize=1000`)).json()) as { items: { id: string; position: number }[] };
    const event = page.items.find((item) => item.position === fulfilled!.position)!;
    const body = JSON.stringify(event);
    // Signed as the listener signs a delivery, with the endpoint's secret.
    const post = (text: string, timestamp = new Date()) =>
      fetch(receiverUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...webhookHeaders({ id: event.id, timestamp, body, secrets: [secret] }) },
        body: text,
      });
    expect((await post(body)).status).toBe(204);
    expect((await post(body.replace(`"requestId":"${fulfilled!.payload.requestId}"`, '"requestId":"1"'))).status).toBe(400);
    expect((await post(body, new Date(Date.now() - 6 * 60_000))).status).toBe(400);
    await until(() => (receiver.output().match(/^refused: /gm) ?? []).length === 2, 'two refusals', 30_000, receiver.output);
    expect(receiver.output()).toContain('refused: No matching signature found');
    expect(receiver.output()).toContain('refused: Message timestamp too old');
    expect(printed().filter((each) => each.position === event.position)).toHaveLength(1);
  }, 60_000);
});

describe('the page’s commands on that stack', () => {
  it(`${where(docBlock('events-replay'))}: a page of fulfilments and sales, then wallet 1's finalized events after the cursor`, async () => {
    const { code, stdout, stderr } = await runShell(onStack(docBlock('events-replay').text, stackUrl), env);
    expect(code, stderr + stdout).toBe(0);
    const [first, after] = jsonValues(stdout) as { items: { type: string; wallets: string[] }[]; nextCursor: string; hasMore: boolean }[];
    expect(first).toMatchObject({ nextCursor: expect.any(String), hasMore: expect.any(Boolean) });
    expect(first!.items.length).toBeGreaterThan(0);
    expect(first!.items.every((item) => item.type === 'forge.fulfilled' || item.type === 'sale.completed')).toBe(true);
    expect(after).toMatchObject({ nextCursor: expect.any(String) });
    expect(after!.items.every((item) => item.wallets.includes(wallet1))).toBe(true);
  });

  it(`${where(docBlock('webhook-dead-letters'))}: counts the dead letters, and sends the endpoint's again`, async () => {
    const { code, stdout, stderr } = await runShell(docBlock('webhook-dead-letters').text, env);
    expect(code, stderr + stdout).toBe(0);
    expect(stdout).toContain('No dead-lettered deliveries.');
    expect(stdout).toContain('game-server: 0 dead-lettered deliveries queued again, each with a fresh retry window');
  });
});
