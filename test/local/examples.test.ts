import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack';

/** The README's realtime walk-through as written: examples/events.mjs listening while npm run simulate plays the indexer. */
const repository = join(import.meta.dirname, '..', '..');
const wallet = '0x00000000000000000000000000000000000000c1';
let stack: TestStack;
let example: ChildProcess | undefined;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  if (example?.exitCode === null) example.kill('SIGKILL');
  await stack?.stop();
});

function run(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, { cwd: repository, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 100));
};

it('node examples/events.mjs prints marketChanged and the wallet’s forgeFulfilled events, and stops on SIGTERM', async () => {
  const events = run(process.execPath, ['examples/events.mjs', wallet], { HATCHERY_URL: stack.url });
  example = events.child;
  await until(() => events.output().includes(`listening for ${wallet} on ${stack.url}`) || events.child.exitCode !== null);
  expect(events.output()).toContain('listening for');

  const simulate = run('npm', ['run', '-s', 'simulate', '--', '--every', '100', '--count', '4', '--wallet', wallet], { HATCHERY_DATA_DIR: stack.dataDir });
  expect(await simulate.exited).toBe(0);
  await until(() => (events.output().match(/forgeFulfilled/g) ?? []).length >= 2);
  expect(events.output()).toMatch(/marketChanged \{ count: \d+, maxBlock: '\d+', version: \d+ \}/);

  events.child.kill('SIGTERM');
  expect(await events.exited).toBe(0);
}, 60_000);
