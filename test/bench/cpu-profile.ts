import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A V8 CPU profile, as `--cpu-prof` and the inspector's Profiler.stop write it (.cpuprofile). */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds from the sample before (from startTime for the first). */
  timeDeltas: number[];
}

export interface Frame {
  name: string;
  /** file:line, in the sources where a bundle's source map tells. */
  location: string;
  selfMs: number;
}

/** V8's pseudo-frames: where no JavaScript ran. */
const idle = new Set(['(idle)', '(root)']);

/** A frame's source position: through the bundle's source map (url.map) where there is one, relative to `root`. */
function locator(root: string): (callFrame: CpuProfile['nodes'][number]['callFrame']) => { name: string; location: string } {
  const maps = new Map<string, { map: SourceMap; dir: string } | undefined>();
  const mapOf = (file: string) => {
    if (!maps.has(file))
      maps.set(file, existsSync(`${file}.map`) ? { map: new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))), dir: dirname(file) } : undefined);
    return maps.get(file);
  };
  return ({ functionName, url, lineNumber, columnNumber }) => {
    const name = functionName || '(anonymous)';
    // V8's pseudo-frames are in parentheses; a named frame without a script is one of Node's C++ bindings.
    if (!url) return { name, location: name.startsWith('(') ? '' : '(native)' };
    if (!url.startsWith('file:')) return { name, location: `${url}:${lineNumber + 1}` };
    const file = fileURLToPath(url);
    const mapped = mapOf(file);
    // The profile's positions count from 0, findOrigin's from 1.
    const origin = mapped?.map.findOrigin(lineNumber + 1, columnNumber + 1);
    if (origin && 'fileName' in origin) {
      // A minified bundle keeps its functions' names (keepNames) but the profiler sees the short ones; the map has both.
      return { name: origin.name ?? name, location: `${relative(root, resolve(mapped!.dir, origin.fileName))}:${origin.lineNumber}` };
    }
    return { name, location: `${relative(root, file)}:${lineNumber + 1}` };
  };
}

/**
 * Self time per frame (function and its place in the sources), largest first,
 * and the time sampled in all: each sample stands for the time until the next.
 */
export function selfTimes(profile: CpuProfile, root: string): { frames: Frame[]; busyMs: number; idleMs: number } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const locate = locator(root);
  const frames = new Map<string, Frame>();
  let busyMs = 0;
  let idleMs = 0;
  profile.samples.forEach((id, index) => {
    const next = profile.timeDeltas[index + 1];
    const ms = (next ?? 0) / 1000;
    const { callFrame } = nodes.get(id)!;
    if (idle.has(callFrame.functionName)) {
      idleMs += ms;
      return;
    }
    busyMs += ms;
    const { name, location } = locate(callFrame);
    const key = `${name}\n${location}`;
    const frame = frames.get(key) ?? { name, location, selfMs: 0 };
    frame.selfMs += ms;
    frames.set(key, frame);
  });
  return { frames: [...frames.values()].sort((a, b) => b.selfMs - a.selfMs), busyMs, idleMs };
}

/** The top `count` frames by self time, as a table: name, file:line, self ms and its share of the time JavaScript ran. */
export function printTopFrames(profile: CpuProfile, root: string, count = 15): void {
  const { frames, busyMs, idleMs } = selfTimes(profile, root);
  const fit = (text: string, width: number) => (text.length <= width ? text : `…${text.slice(text.length - width + 1)}`);
  console.log(`${'frame'.padEnd(36)} ${'file:line'.padEnd(72)} ${'self ms'.padStart(8)} ${'%'.padStart(6)}`);
  for (const frame of frames.slice(0, count)) {
    console.log(
      `${fit(frame.name, 36).padEnd(36)} ${fit(frame.location, 72).padEnd(72)} ${frame.selfMs.toFixed(1).padStart(8)} ${((100 * frame.selfMs) / busyMs).toFixed(1).padStart(6)}`,
    );
  }
  console.log(`(${busyMs.toFixed(0)} ms busy, the % base; ${idleMs.toFixed(0)} ms idle, waiting on PostgreSQL)`);
}
