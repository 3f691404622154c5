import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '@hatchery/local/ports';

let child: ChildProcess | undefined;
let dataDir: string;

afterAll(async () => {
  if (child?.pid && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const postgresProcessesUsing = (dir: string) => {
  try {
    return execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};

it('npm start serves the demo data over HTTP and stops cleanly on SIGTERM', async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-start-'));
  await chmod(dataDir, 0o755);
  const port = await freePort();
  child = spawn('npm', ['start', '--silent'], {
    env: { ...process.env, PORT: String(port), HATCHERY_DATA_DIR: dataDir, LOG_LEVEL: 'warn', DATABASE_URL: '', DYNAMODB_ENDPOINT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child!.on('exit', (code, signal) => resolve({ code, signal })));

  const deadline = Date.now() + 90_000;
  while (!output.includes('Hatchery is running')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(output).toContain(`http://127.0.0.1:${port}`);

  const response = await fetch(`http://127.0.0.1:${port}/editions?pageSize=3`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { items: unknown[]; totalCount: number };
  expect(body.items).toHaveLength(3);
  expect(body.totalCount).toBeGreaterThan(3);
  expect(postgresProcessesUsing(dataDir)).not.toBe('');

  // As a terminal's Ctrl-C or a process manager does: the signal goes to the whole process group.
  process.kill(-child.pid!, 'SIGTERM');
  expect([{ code: 0, signal: null }, { code: null, signal: 'SIGTERM' }, { code: 143, signal: null }]).toContainEqual(await exited);
  const stopDeadline = Date.now() + 15_000;
  while (postgresProcessesUsing(dataDir) !== '' && Date.now() < stopDeadline) await new Promise((resolve) => setTimeout(resolve, 200));
  expect(postgresProcessesUsing(dataDir)).toBe('');
  expect(output).not.toMatch(/Error|ERR!/);
}, 120_000);
