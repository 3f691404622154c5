import { spawn, type ChildProcess } from 'node:child_process';
import { repository } from './docs';

/** A command a reader types at a terminal of their own, as a test runs it (test/stack/local/examples.test.ts and its siblings). */
export interface Started {
  child: ChildProcess;
  /** Its stdout and stderr so far, interleaved as a terminal shows them. */
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Terminals a test opens, so that it closes each at the end: one line of a block runs in each, with bash at the
 * repository root, in a process group of its own as a terminal's job is.
 */
export function terminals() {
  const started: Started[] = [];

  function terminal(line: string, env: Record<string, string>): Started {
    const child = spawn('bash', ['-c', line], { cwd: repository, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const opened = { child, output: () => output, exited };
    started.push(opened);
    return opened;
  }

  /** Ctrl-C in every terminal still running, newest first, and SIGKILL to any that has not stopped 15 s later. */
  async function closeAll(): Promise<void> {
    for (const opened of started.reverse()) {
      if (opened.child.exitCode !== null || opened.child.signalCode !== null) continue;
      process.kill(-opened.child.pid!, 'SIGINT');
      const stopped = await Promise.race([opened.exited.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 15_000))]);
      if (!stopped) process.kill(-opened.child.pid!, 'SIGKILL');
    }
  }

  return { terminal, closeAll };
}

/** Ctrl-C in that terminal: SIGINT to its whole process group. */
export const ctrlC = (started: Started) => {
  if (started.child.exitCode === null && started.child.signalCode === null) process.kill(-started.child.pid!, 'SIGINT');
  return started.exited;
};

/** Waits for `condition`, checked every 100 ms; on a timeout, the error shows `output` when given. */
export async function until(condition: () => boolean, what: string, timeoutMs = 60_000, output?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${output ? `:\n${output()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
