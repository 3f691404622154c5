import { readFileSync } from 'node:fs';

/** A process's parent, from /proc on Linux (undefined once the process is gone); elsewhere only this process's own. */
function parentOf(pid: number): number | undefined {
  if (pid === process.pid) return process.ppid;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid …: the command may hold spaces and parentheses, so read after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function isShell(pid: number): boolean {
  try {
    return /^(sh|dash|bash|zsh|ksh|ash)$/.test(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
  } catch {
    return false;
  }
}

/**
 * The processes that launched this one, each with the parent it must keep: this process's own, and under npm, when a
 * shell stands between (a script without `exec`), the shell's, since a shell outlives a killed npm.
 */
function launchers(): { pid: number; parent: number | undefined }[] {
  const chain: { pid: number; parent: number | undefined }[] = [{ pid: process.pid, parent: process.ppid }];
  if (process.env.npm_lifecycle_event && isShell(process.ppid)) chain.push({ pid: process.ppid, parent: parentOf(process.ppid) });
  return chain.filter(({ parent }) => parent !== undefined && parent > 1);
}

/** Reading a process's parent is one small /proc read: often enough that a killed launcher's command is gone within a second or two, even on a busy machine. */
const launcherPollMs = 200;

/**
 * Calls `gone` once the command that launched this process exits without passing a signal on (a SIGKILL to npm, a
 * process manager's signal to npm alone): a local command goes with its launcher instead of running on as an orphan.
 */
export function followLauncher(gone: () => void): void {
  const watched = launchers();
  let called = false;
  setInterval(() => {
    if (called || !watched.some(({ pid, parent }) => parentOf(pid) !== parent)) return;
    called = true;
    gone();
  }, launcherPollMs).unref();
}
