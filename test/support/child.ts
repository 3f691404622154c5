import { spawn } from 'node:child_process';

/** A process running one function of a test or bench file, answering commands over IPC. */
export interface Child {
  /** Sends `command` (none: only waits) and resolves with the first message whose `cmd` is `reply`. */
  request<T>(command: object | undefined, reply: string): Promise<T>;
  close(): void;
  /** The message the process announced itself with. */
  first: Record<string, unknown>;
}

/**
 * Runs `body` (a self-contained function: it reaches nothing outside its own
 * source) in a fresh Node.js process, so many sockets or much CPU stay off
 * the caller's event loop, and waits for its `first` message. A process that
 * exits early fails every request still waiting, with its exit code.
 */
export async function startChild(body: () => void, first = 'ready'): Promise<Child> {
  // Vitest and tsx compile with esbuild's keepNames, whose `__name` helper the function's source calls.
  const source = `const __name = (target) => target; (${body.toString()})()`;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const replies: Array<{ cmd: string; resolve: (message: unknown) => void; reject: (error: Error) => void }> = [];
  child.on('message', (message: { cmd: string }) => {
    const index = replies.findIndex((reply) => reply.cmd === message.cmd);
    if (index >= 0) replies.splice(index, 1)[0]!.resolve(message);
  });
  child.once('exit', (code, signal) => {
    for (const reply of replies.splice(0)) reply.reject(new Error(`the child process exited (${code ?? signal}) before answering ${reply.cmd}`));
  });
  const request = <T>(command: object | undefined, reply: string) =>
    new Promise<T>((resolve, reject) => {
      replies.push({ cmd: reply, resolve: resolve as (message: unknown) => void, reject });
      if (command) child.send(command);
    });
  const announced = await request<Record<string, unknown>>(undefined, first);
  return { request, close: () => child.connected && child.send({ cmd: 'close' }), first: announced };
}
