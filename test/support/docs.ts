import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The documentation as the tests read it: README.md and every docs/*.md,
 * their headings (with GitHub's anchors), links and fenced blocks.
 *
 * The convention for fenced blocks: the line right before each fence is one of
 *   <!-- tested: <id> -->       a test reads the block with docBlock('<id>') and runs or checks it;
 *   <!-- not run: <reason> -->  it cannot run here, for that reason (an AWS account, say).
 * test/unit/docs/conventions.test.ts fails on a fence with neither, and on an id no test reads.
 */
export const repository = join(import.meta.dirname, '..', '..');

export interface Heading {
  line: number;
  level: number;
  text: string;
  /** GitHub's anchor for it, `-1`, `-2`… added to repeats as GitHub does. */
  slug: string;
}

export interface Link {
  line: number;
  target: string;
}

export interface Block {
  /** Relative to the repository, e.g. `docs/http-api.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  /** The comment on the line before the fence, if it is one of the convention's. */
  marker?: { kind: 'tested'; id: string } | { kind: 'not run'; reason: string };
  /** That line, whatever it is (to report a malformed marker). */
  before: string;
}

export interface DocPage {
  file: string;
  text: string;
  headings: Heading[];
  links: Link[];
  blocks: Block[];
  /** Convention markers not followed by a fence. */
  strayMarkers: number[];
}

/** README.md, then docs/*.md in name order. */
export function docFiles(): string[] {
  const docs = existsSync(join(repository, 'docs'))
    ? readdirSync(join(repository, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => `docs/${name}`)
    : [];
  return ['README.md', ...docs];
}

/** The text GitHub renders for a heading's inline markdown, as its anchor is computed from. */
function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim();
}

/** GitHub's heading anchor (github-slugger): lowercase, punctuation removed except `-` and `_`, each space a `-`. */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const markerPattern = /^<!--\s*(tested|not run):\s*(.*?)\s*-->$/;
// Any indentation: a fence inside a list item is indented to the item's content.
const fencePattern = /^( *)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;

export function parseDoc(file: string, text: string = readFileSync(join(repository, file), 'utf8')): DocPage {
  const lines = text.split('\n');
  const headings: Heading[] = [];
  const links: Link[] = [];
  const blocks: Block[] = [];
  const strayMarkers: number[] = [];
  const seen = new Map<string, number>();
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const fence = fencePattern.exec(line);
    if (fence) {
      const [, , marks, lang] = fence;
      const body: string[] = [];
      let end = index + 1;
      while (end < lines.length && !new RegExp(`^ *${marks![0]}{${marks!.length},}\\s*$`).test(lines[end]!)) body.push(lines[end++]!);
      const before = index > 0 ? lines[index - 1]!.trim() : '';
      const marked = markerPattern.exec(before);
      blocks.push({
        file,
        line: index + 1,
        lang: lang ?? '',
        text: body.join('\n') + '\n',
        before,
        marker: marked ? (marked[1] === 'tested' ? { kind: 'tested', id: marked[2]! } : { kind: 'not run', reason: marked[2]! }) : undefined,
      });
      index = end;
      continue;
    }
    if (markerPattern.test(line.trim()) && !fencePattern.test(lines[index + 1] ?? '')) strayMarkers.push(index + 1);
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const text = headingText(heading[2]!);
      const base = githubSlug(text);
      let slug = base;
      // github-slugger: a repeat gets -1, -2, … (skipping any that is itself taken).
      while (seen.has(slug)) {
        const count = seen.get(base)! + 1;
        seen.set(base, count);
        slug = `${base}-${count}`;
      }
      seen.set(slug, 0);
      headings.push({ line: index + 1, level: heading[1]!.length, text, slug });
    }
    // Links outside code spans: [text](target), images too, and reference definitions.
    const prose = line.replace(/(`+)[\s\S]*?\1/g, '');
    for (const match of prose.matchAll(/!?\[(?:[^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: index + 1, target: match[1]! });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/.exec(prose);
    if (definition) links.push({ line: index + 1, target: definition[1]! });
  }
  return { file, text, headings, links, blocks, strayMarkers };
}

export function docPages(): DocPage[] {
  return docFiles().map((file) => parseDoc(file));
}

/** The block a `<!-- tested: id -->` marks, wherever in README.md or docs/ it is. */
export function docBlock(id: string): Block {
  const found = docPages()
    .flatMap((page) => page.blocks)
    .filter((block) => block.marker?.kind === 'tested' && block.marker.id === id);
  if (found.length !== 1) throw new Error(`${found.length} blocks are marked <!-- tested: ${id} --> in README.md and docs/ (expected 1)`);
  return found[0]!;
}

/** Where a block is, for messages: `docs/http-api.md:42`. */
export const where = (block: Block) => `${block.file}:${block.line}`;

/**
 * The lines of a snippet block (its trailing `// ` comments and blank lines aside) that are not, in order, whole lines
 * of `file` (relative to the repository): none when the block is the file's own code, shortened.
 */
export function linesNotInFile(block: Block, file: string): string[] {
  const lines = readFileSync(join(repository, file), 'utf8')
    .split('\n')
    .map((line) => line.trim());
  let from = 0;
  const missing: string[] = [];
  for (const line of block.text.split('\n')) {
    const code = line.replace(/\s+\/\/ .*$/, '').trim();
    if (!code) continue;
    const at = lines.indexOf(code, from);
    if (at < from) missing.push(`${where(block)}: ${code}`);
    else from = at + 1;
  }
  return missing;
}

/** The commands of a block, one a line: comment lines and blank lines dropped (each kept line runs on its own). */
export function commandLines(block: Block): string[] {
  return block.text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

/** A block's text for a stack that is not on port 3000. */
export const onStack = (text: string, url: string) => text.replaceAll('http://127.0.0.1:3000', url);

/**
 * What a reader's terminal does with the block, but strict: bash stops at the
 * first failing command, and curl fails on an HTTP error (the body still printed).
 */
export const strictShell = (script: string) => `set -euo pipefail\ncurl() { command curl --silent --show-error --fail-with-body "$@"; }\n${script}`;

/** The JSON values printed one after another (curl adds no newline, so a terminal shows them run together). */
export function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') {
      if (depth++ === 0) start = index;
    } else if ((char === '}' || char === ']') && --depth === 0) values.push(JSON.parse(text.slice(start, index + 1)));
  }
  return values;
}

export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a script with bash in the repository, as a reader pastes it at its root; a variable given as undefined is unset. */
export function runShell(script: string, env: Record<string, string | undefined> = {}, timeoutMs = 60_000): Promise<ShellResult> {
  const environment = { ...process.env, ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete environment[name];
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', strictShell(script)], { cwd: repository, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
