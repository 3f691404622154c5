import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@hatchery/local/ports';
import { commandLines, docBlock, jsonValues, onStack, repository, runShell, where } from '../../support/docs';
import { ctrlC, terminals, until, type Started } from '../../support/terminal';

/**
 * The examples a reader runs by hand, as README.md and docs/ write
 * them, against the stack their own `npm start` runs (its port and data dir
 * set as the docs say for a second stack: PORT, HATCHERY_DATA_DIR, and
 * HATCHERY_URL for the events example): the start command, a token and
 * /accounts/me, the wallet-link walkthrough, and the events with simulate.
 * The public curl examples run in test/stack/local/demo-data.test.ts, the front-end
 * example in test/browser/client.test.ts, the webhook walkthrough in
 * test/stack/local/webhook-receiver.test.ts.
 */
const { terminal, closeAll } = terminals();

let dataDir: string;
let stackUrl: string;
let env: Record<string, string>;
let start: Started;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-examples-'));
  await chmod(dataDir, 0o755);
  // A second stack beside a reader's own: its port and data dir, and nothing else of the test's environment that a fresh shell lacks.
  env = { PORT: String(await freePort()), HATCHERY_DATA_DIR: dataDir, DATABASE_URL: '', DYNAMODB_ENDPOINT: '' };
  const [both] = commandLines(docBlock('two-commands'));
  const npmStart = both!.split('&&')[1]!.trim();
  start = terminal(`exec ${npmStart}`, env);
  await until(() => /Hatchery is running at (\S+)/.test(start.output()) || start.child.exitCode !== null, 'npm start', 110_000, start.output);
  stackUrl = /Hatchery is running at (\S+)/.exec(start.output())?.[1] ?? '';
  expect(stackUrl, start.output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
}, 120_000);

afterAll(async () => {
  await closeAll();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe('the two commands', () => {
  it('npm start, as the README writes it, serves the product; npm ci and npm test are what CI runs', async () => {
    const block = docBlock('two-commands');
    const [both, test] = commandLines(block);
    expect(both, where(block)).toMatch(/^npm ci && npm start\s+#/);
    expect(test, where(block)).toMatch(/^npm test\s+#/);
    // `npm ci` would reinstall this very checkout, and `npm test` is the suite this test is in: .ci/run runs both, as written.
    const ci = (await readFile(join(repository, '.ci', 'run'), 'utf8')).split('\n').map((line) => line.trim());
    expect(ci).toContain('npm ci');
    expect(ci).toContain('npm test');
    expect(start.output()).toContain(`Docs       ${stackUrl}/docs`);
    const health = await fetch(`${stackUrl}/health`);
    expect(health.status).toBe(200);
    expect((await (await fetch(`${stackUrl}/docs`)).text()).toLowerCase()).toContain('swagger');
  });
});

describe('a token and /accounts/me', () => {
  for (const block of [docBlock('tour-account'), docBlock('protected-endpoint')]) {
    it(`${where(block)}: the token's account, made by the first request`, async () => {
      const { code, stdout, stderr } = await runShell(onStack(block.text, stackUrl), env);
      expect(code, stderr + stdout).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ id: 'alice', email: 'alice@example.com' });
    });
  }
});

describe('linking a wallet locally', () => {
  const block = docBlock('wallet-link');
  // The walkthrough's output: the challenge, the linked account, the account after the unlink.
  const outputs = (stdout: string) => jsonValues(stdout) as Record<string, unknown>[];

  it(`${where(block)}: a challenge, signed with a new key, links that wallet; the unlink takes it off`, async () => {
    const { code, stdout, stderr } = await runShell(onStack(block.text, stackUrl), { ...env, WALLET_KEY: undefined }, 120_000);
    expect(code, stderr + stdout).toBe(0);
    const [challenge, linked, unlinked] = outputs(stdout);
    expect(challenge).toEqual({
      message: expect.stringMatching(/^Link this wallet to your Hatchery account\n/),
      nonce: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(linked).toMatchObject({ email: 'alice@example.com', walletLinked: true, walletAddress: expect.stringMatching(/^0x[0-9a-f]{40}$/) });
    expect(unlinked).toMatchObject({ email: 'alice@example.com', walletLinked: false });
    expect(unlinked).not.toHaveProperty('walletAddress');
    // npm start's own output, at its default level: the audit trail's line of the link names the account and the wallet, and no line holds a token or a signature.
    const lines = start
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const linkLine = lines.find((line) => line.message === 'wallet linked' && line.wallet === linked!.walletAddress);
    expect(linkLine, start.output()).toMatchObject({ level: 'INFO', accountId: 'alice', route: 'POST /accounts/me/wallet', requestId: expect.any(String) });
    expect(start.output()).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+|0x[0-9a-f]{130}/i);
  });

  it(`${where(block)}: with WALLET_KEY set, it links the wallet of that key`, async () => {
    const key = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
    const { code, stdout, stderr } = await runShell(onStack(block.text, stackUrl), { ...env, WALLET_KEY: key }, 120_000);
    expect(code, stderr + stdout).toBe(0);
    const [, linked] = outputs(stdout);
    expect(linked).toMatchObject({ walletAddress: privateKeyToAccount(key).address.toLowerCase() });
  });
});

describe('events with simulate', () => {
  const marketChanged = /marketChanged \{ count: \d+, maxBlock: '\d+', version: \d+ \}/;
  // console.log breaks a long object over lines.
  const forgeFulfilled = /forgeFulfilled \{\s+requestId: '\d+',\s+tokenId: '\d+',\s+editionId: '\d+',\s+buyer: '0x[0-9a-f]{40}',\s+sequence: \d+\s+\}/;

  it(`the README's tour (${where(docBlock('tour-events'))}): wallet 1's events while simulate plays the indexer at its own pace; Ctrl-C stops both`, async () => {
    const block = docBlock('tour-events');
    const [listen, simulate] = commandLines(block);
    expect(listen).toMatch(/^node examples\/events\.mjs\s/);
    expect(simulate).toMatch(/^npm run simulate\s/);
    const events = terminal(listen!, { ...env, HATCHERY_URL: stackUrl });
    await until(
      () => events.output().includes(`listening for 0x0000000000000000000000000000000000000001 on ${stackUrl}`),
      'the listener',
      30_000,
      events.output,
    );
    const indexer = terminal(simulate!, env);
    await until(
      () => forgeFulfilled.test(events.output()) && marketChanged.test(events.output()),
      'marketChanged and forgeFulfilled',
      60_000,
      () => events.output() + indexer.output(),
    );
    // simulate stops where it is (npm, interrupted, ends by the signal); the listener closes its connection and exits 0.
    await ctrlC(indexer);
    expect(indexer.output()).toMatch(/block \d+: fulfilled forge request\(s\) \d+, \d+ in two commits/);
    expect(await ctrlC(events)).toEqual({ code: 0, signal: null });
  }, 90_000);

  it(`docs/realtime.md's command (${where(docBlock('events-command'))}) with a wallet named, and simulate's options as the page gives them; SIGTERM stops it`, async () => {
    const block = docBlock('events-command');
    const [line] = commandLines(block);
    // "node examples/events.mjs   # wallet 1; or name one: node examples/events.mjs 0x…"
    expect(line).toMatch(/# wallet 1; or name one: node examples\/events\.mjs 0x…$/);
    const wallet = '0x00000000000000000000000000000000000000c1';
    const events = terminal(`exec ${line!.replace(/\s+#.*$/, '')} ${wallet}`, { ...env, HATCHERY_URL: stackUrl });
    await until(() => events.output().includes(`listening for ${wallet} on ${stackUrl}`), 'the listener', 30_000, events.output);
    const indexer = terminal(`npm run -s simulate -- --every 100 --count 4 --wallet ${wallet}`, env);
    expect(await indexer.exited, indexer.output()).toEqual({ code: 0, signal: null });
    await until(() => (events.output().match(/forgeFulfilled/g) ?? []).length >= 2, 'two forgeFulfilled', 30_000, events.output);
    expect(events.output()).toMatch(marketChanged);
    process.kill(events.child.pid!, 'SIGTERM');
    expect(await events.exited).toEqual({ code: 0, signal: null });
  }, 60_000);
});

describe('the events example’s mistakes, each one line', () => {
  it('a wallet that is not an address, and no stack at HATCHERY_URL, each get one line and exit 1, no stack trace', async () => {
    const badWallet = terminal('node examples/events.mjs 0x01', { ...env, HATCHERY_URL: stackUrl });
    expect((await badWallet.exited).code).toBe(1);
    expect(badWallet.output().trim().split('\n')).toEqual([`examples/events.mjs: '0x01' is not a wallet address: 0x followed by 40 hex characters`]);

    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const noStack = terminal('node examples/events.mjs', { ...env, HATCHERY_URL: nowhere });
    expect((await noStack.exited).code).toBe(1);
    expect(noStack.output().trim().split('\n')).toEqual([
      `examples/events.mjs: no Hatchery answers at ${nowhere}; start one with \`npm start\`, or set HATCHERY_URL to the URL it prints`,
    ]);
  }, 60_000);
});
