/**
 * `npm run smoke -- <base url>`, the platform team's post-deploy check, run
 * as a separate process against the local stack: every check passes, and a
 * check that fails makes it exit non-zero.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSizes } from '@hatchery/local/demo-data';
import { startTestStack, type TestStack } from '../../support/stack';

const run = promisify(execFile);
const repositoryRoot = new URL('../../../', import.meta.url).pathname;
const allowedOrigin = 'https://app.example.com';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ demoData: demoSizes.demo, env: { CORS_ORIGINS: allowedOrigin } });
}, 120_000);
afterAll(() => stack?.stop());

async function smoke(...args: string[]): Promise<{ code: number; stdout: string }> {
  const result = await run('npm', ['run', '-s', 'smoke', '--', stack.url, ...args], { cwd: repositoryRoot, timeout: 120_000 }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  return result;
}

/** What the indexer does on a new block: a listing changes, then NOTIFY; the listener then sends marketChanged. */
async function indexerActivity(until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    await stack.sql(
      `UPDATE indexer.listings SET updated_at_block = (SELECT max(updated_at_block) + 1 FROM indexer.listings) WHERE token_id = (SELECT min(token_id) FROM indexer.listings WHERE status = 'Active')`,
    );
    await stack.sql(`NOTIFY indexer_live_query`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

describe('npm run smoke', () => {
  it('passes every check against a healthy stage: public routes, 404, 401, preflight, the token, the hub with an event', async () => {
    const token = await stack.idp.signToken({ uid: 'smoke-check', email: 'smoke@example.com', name: 'Smoke' });
    const checked = smoke('--origin', allowedOrigin, '--token', token, '--event-timeout', '30', '--require-event');
    await indexerActivity(checked);
    const { code, stdout } = await checked;
    expect(stdout).toMatch(/all \d+ checks passed/);
    expect(code, stdout).toBe(0);
    for (const name of [
      'GET /editions',
      'GET /transparency/summary',
      'unknown path → problem+json 404',
      `CORS preflight from ${allowedOrigin}`,
      'GET /accounts/me with the token',
      'hub: connect, subscribe, event',
    ]) {
      expect(stdout, name).toMatch(new RegExp(`^PASS  ${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} `, 'm'));
    }
    expect(stdout).toMatch(/marketChanged/);
  }, 180_000);

  it('fails, exiting 1, when the stage refuses the front end’s origin or the token', async () => {
    const { code, stdout } = await smoke('--origin', 'https://evil.example.net', '--token', 'not-a-token', '--event-timeout', '1');
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}CORS preflight from https:\/\/evil\.example\.net /m);
    expect(stdout).toMatch(/^FAIL {2}GET \/accounts\/me with the token .*401/m);
    expect(stdout).toMatch(/checks failed/);
  }, 120_000);

  it('refuses bad arguments with a one-line usage, exiting 2', async () => {
    const { code } = await run('npm', ['run', '-s', 'smoke', '--', 'not a url'], { cwd: repositoryRoot }).then(
      () => ({ code: 0 }),
      (error: { code: number }) => ({ code: error.code }),
    );
    expect(code).toBe(2);
  });
});
