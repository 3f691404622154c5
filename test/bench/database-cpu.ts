import { readdirSync, readFileSync } from 'node:fs';

/** utime + stime (+ cutime + cstime) of one process from /proc, in clock ticks; undefined once it is gone. */
function ticksOf(pid: string, withChildren: boolean): { ticks: number; parent: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const [parent, utime, stime, cutime, cstime] = [fields[1]!, fields[11]!, fields[12]!, fields[13]!, fields[14]!];
    return { ticks: utime + stime + (withChildren ? cutime + cstime : 0), parent };
  } catch {
    return undefined;
  }
}

/** Linux's USER_HZ: /proc counts CPU time in hundredths of a second. */
const msPerTick = 10;

/** The CPU time one process has used so far, in ms; undefined once it is gone (or where /proc cannot tell). */
export function processCpuMs(pid: number): number | undefined {
  const process = ticksOf(String(pid), false);
  return process && process.ticks * msPerTick;
}

/**
 * The CPU time a PostgreSQL cluster has used so far, in ms: its postmaster
 * (with the backends it has reaped) and every live backend. Undefined where
 * /proc cannot tell (not Linux, or the cluster is not a local process).
 */
export function postgresCpuMs(postmasterPid: number): number | undefined {
  const postmaster = ticksOf(String(postmasterPid), true);
  if (!postmaster) return undefined;
  let ticks = postmaster.ticks;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const child = ticksOf(pid, false);
    if (child?.parent === postmasterPid) ticks += child.ticks;
  }
  return ticks * msPerTick;
}
