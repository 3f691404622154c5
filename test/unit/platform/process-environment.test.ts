import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs `body` in a fresh Node process, where copyProcessEnvironment has not run yet; its last line is JSON. */
function inFreshProcess(body: string, env: Record<string, string> = {}): unknown {
  const script = `import { copyProcessEnvironment } from '@hatchery/platform/process-environment';\n${body}`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

describe('copyProcessEnvironment', () => {
  it('keeps every variable, sees later writes and deletions, and hands its variables to child processes', () => {
    const result = inFreshProcess(
      `
      const before = { ...process.env };
      copyProcessEnvironment();
      const same = JSON.stringify(Object.entries(process.env).sort()) === JSON.stringify(Object.entries(before).sort());
      process.env._X_AMZN_TRACE_ID = 'Root=1-00000000-000000000000000000000001';
      delete process.env.HATCHERY_GONE;
      const { execFileSync } = await import('node:child_process');
      const child = execFileSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify([process.env._X_AMZN_TRACE_ID, process.env.HATCHERY_KEPT, process.env.HATCHERY_GONE ?? null]))'], { encoding: 'utf8' });
      console.log(JSON.stringify({ same, plain: Object.getPrototypeOf(process.env) === Object.prototype, kept: process.env.HATCHERY_KEPT, gone: 'HATCHERY_GONE' in process.env, child: JSON.parse(child) }));
      `,
      { HATCHERY_KEPT: 'kept', HATCHERY_GONE: 'gone' },
    );
    expect(result).toEqual({
      same: true,
      plain: true,
      kept: 'kept',
      gone: false,
      child: ['Root=1-00000000-000000000000000000000001', 'kept', null],
    });
  });

  it('copies once: a second call keeps the object the first one made', () => {
    const result = inFreshProcess(`
      copyProcessEnvironment();
      const first = process.env;
      copyProcessEnvironment();
      console.log(JSON.stringify({ same: first === process.env }));
    `);
    expect(result).toEqual({ same: true });
  });
});
