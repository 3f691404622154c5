import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { healthSchema } from '@hatchery/core/health';
import { docBlock, docPages, githubSlug, linesNotInFile, parseDoc, repository, where, type DocPage } from '../../support/docs';

/**
 * A README of at most 250 lines, docs/ one page per topic, every
 * relative link and anchor resolving, and every fenced block either run by a
 * test (`<!-- tested: id -->`, which a test reads through docBlock) or marked with why it
 * cannot run here (`<!-- not run: reason -->`). The blocks checked without a
 * stack are checked here too. Docs and comments state rules, so neither cites
 * a date or a commit.
 */
const pages = docPages();

/**
 * What a note of history cites: an ISO date (not one inside a path, such as an
 * AWS API's version, nor a timestamp), or a commit id, abbreviated (7 to 12
 * hex digits) or full (40), with a digit and a letter, standing as a word of
 * its own (not a part of an address, a URL, a trace id or a UUID).
 */
const historyPatterns = [
  { what: 'a date', pattern: /(?<![\w/.-])(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\w/-])/g },
  { what: 'a commit', pattern: /(?<![\w/.:#-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])(?:[0-9a-f]{7,12}|[0-9a-f]{40})(?![\w/-]|\.\w)/g },
];

/** Each date or commit `text` cites, as `<where>: a date <the date>`. */
function historyCited(where: string, text: string): string[] {
  return historyPatterns.flatMap(({ what, pattern }) => [...text.matchAll(pattern)].map((match) => `${where}: ${what} ${match[0]}`));
}

/** A page's prose: its lines outside fenced blocks (whose examples may hold any value), with their line numbers. */
function proseLines(page: DocPage): { line: number; text: string }[] {
  const fenced = new Set<number>();
  for (const block of page.blocks) {
    const bodyLines = block.text.split('\n').length - 1;
    for (let line = block.line; line <= block.line + bodyLines + 1; line++) fenced.add(line);
  }
  return page.text.split('\n').flatMap((text, index) => (fenced.has(index + 1) ? [] : [{ line: index + 1, text }]));
}

/** The source files of packages/, infra/, test/ and the root configs, generated and installed folders aside. */
function sourceFiles(): string[] {
  const found: string[] = ['sst.config.ts', 'vitest.config.ts'];
  const visit = (dir: string) => {
    for (const entry of readdirSync(join(repository, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && !['node_modules', 'dist', 'generated'].includes(entry.name)) visit(path);
      } else if (/\.(ts|mts|js|mjs)$/.test(entry.name)) found.push(path);
    }
  };
  for (const dir of ['packages', 'infra', 'test']) visit(dir);
  return found;
}

/** Every comment of a source file, with its line: the trivia before each token as TypeScript parses the file, so no string or regex is taken for one. */
function comments(file: string, text: string = readFileSync(join(repository, file), 'utf8')): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = new Map<number, { line: number; text: string }>();
  const visit = (node: ts.Node) => {
    // Before a token: the comments ending the previous token's line (trailing), then those on lines of their own (leading).
    for (const range of [...(ts.getTrailingCommentRanges(text, node.pos) ?? []), ...(ts.getLeadingCommentRanges(text, node.pos) ?? [])]) {
      found.set(range.pos, { line: source.getLineAndCharacterOfPosition(range.pos).line + 1, text: text.slice(range.pos, range.end) });
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found.values()];
}

/** Every relative link of `pages` that names no file, or an anchor no heading of its page has. */
function linkProblems(pages: DocPage[], exists: (path: string) => boolean = (path) => existsSync(join(repository, path))): string[] {
  const slugs = new Map(pages.map((page) => [page.file, new Set(page.headings.map((heading) => heading.slug))]));
  const problems: string[] = [];
  for (const page of pages) {
    for (const { line, target } of page.links) {
      // Another scheme (https:, mailto:) or a protocol-relative URL is not ours to check.
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const at = `${page.file}:${line} → ${target}`;
      const hash = target.indexOf('#');
      const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const file = path ? normalize(join(dirname(page.file), path)) : page.file;
      if (file.startsWith('..') || !(slugs.has(file) || exists(file))) {
        problems.push(`${at}: no file ${file}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!file.endsWith('.md')) problems.push(`${at}: an anchor into ${file}, which has no headings`);
      else {
        const headings = slugs.get(file) ?? new Set(parseDoc(file).headings.map((heading) => heading.slug));
        if (!headings.has(anchor)) problems.push(`${at}: ${file} has no heading #${anchor}`);
      }
    }
  }
  return problems;
}

/** The ids of the documentation blocks the test files read through docBlock, each with the files that do. */
function blocksReadByTests(): Map<string, string[]> {
  const readers = new Map<string, string[]>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(join(repository, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && entry.name !== 'node_modules') visit(path);
      } else if (/\.(ts|mts|js|mjs)$/.test(entry.name) && path !== 'test/support/docs.ts') {
        for (const [, id] of readFileSync(join(repository, path), 'utf8').matchAll(/docBlock\(\s*['"`]([^'"`]+)['"`]\s*\)/g)) {
          readers.set(id!, [...(readers.get(id!) ?? []), path]);
        }
      }
    }
  };
  visit('test');
  return readers;
}

describe('the documentation’s shape', () => {
  it('README.md is at most 250 lines', () => {
    const readme = pages.find((page) => page.file === 'README.md')!;
    expect(readme.text.trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it('docs/ holds the topic pages, each a title, then who it is for and what they will be able to do; the README links every one', () => {
    const topics = pages.filter((page) => page.file.startsWith('docs/'));
    expect(topics.map((page) => page.file)).toEqual(
      ['benchmarks', 'client', 'deploying', 'http-api', 'local-stack', 'operating', 'ponder', 'realtime', 'webhooks'].map((name) => `docs/${name}.md`),
    );
    const readme = pages.find((page) => page.file === 'README.md')!;
    for (const page of topics) {
      const [title, ...rest] = page.text.split('\n\n');
      expect(title, page.file).toMatch(/^# \S/);
      expect(rest[0], page.file).toMatch(/^[^#<`|-]/);
      expect(rest[0], page.file).toMatch(/\byou\s+will\s+be\s+able\s+to\b/i);
      expect(readme.links.map((link) => link.target.split('#')[0])).toContain(page.file);
    }
  });
});

describe('links and anchors', () => {
  it('every relative link of README.md and docs/ names a file that exists, and every anchor a heading of its page', () => {
    expect(pages.flatMap((page) => page.links).length).toBeGreaterThan(30);
    expect(linkProblems(pages)).toEqual([]);
  });

  it('anchors are GitHub’s: lowercase, punctuation dropped but - and _, spaces to -, repeats numbered', () => {
    expect(githubSlug("How many clients one event reaches: AWS's quotas")).toBe('how-many-clients-one-event-reaches-awss-quotas');
    expect(githubSlug('Queries: paging, filters, sorting')).toBe('queries-paging-filters-sorting');
    expect(githubSlug('What npm start runs')).toBe('what-npm-start-runs');
    expect(githubSlug('A_b – c.d')).toBe('a_b--cd');
    const page = parseDoc('x.md', '# Notes\n\n## Notes\n\n## Notes\n\n## `Code` and [a link](y.md)\n\n```sh\n# not a heading\n```\n');
    expect(page.headings.map((heading) => heading.slug)).toEqual(['notes', 'notes-1', 'notes-2', 'code-and-a-link']);
  });

  it('a broken link or anchor is reported', () => {
    const page = parseDoc(
      'docs/x.md',
      [
        '# X',
        '## Twice',
        '## Twice',
        '[ok](#twice-1) [ok](../README.md#run-it) [ok](local-stack.md) [ok](https://example.com/#nothing)',
        '[bad](#twice-2) [bad](missing.md) [bad](../README.md#no-such-heading) `[not a link](nowhere.md)`',
        '[bad](../package.json#anchor)',
      ].join('\n'),
    );
    expect(linkProblems([page])).toEqual([
      'docs/x.md:5 → #twice-2: docs/x.md has no heading #twice-2',
      'docs/x.md:5 → missing.md: no file docs/missing.md',
      'docs/x.md:5 → ../README.md#no-such-heading: README.md has no heading #no-such-heading',
      'docs/x.md:6 → ../package.json#anchor: an anchor into package.json, which has no headings',
    ]);
  });
});

describe('every fenced block is run by a test or says why it cannot be', () => {
  const blocks = pages.flatMap((page) => page.blocks);
  const readers = blocksReadByTests();

  it('each fence has <!-- tested: id --> or <!-- not run: reason --> on the line before it, and no marker stands without a fence', () => {
    expect(blocks.length).toBeGreaterThan(15);
    expect(blocks.filter((block) => !block.marker).map((block) => `${where(block)} (line before: ${JSON.stringify(block.before)})`)).toEqual([]);
    expect(pages.flatMap((page) => page.strayMarkers.map((line) => `${page.file}:${line}`))).toEqual([]);
  });

  it('each id marks one block, and a test reads it through docBlock', () => {
    const ids = blocks.flatMap((block) => (block.marker?.kind === 'tested' ? [block.marker.id] : []));
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(ids.every((id) => /^[a-z0-9]+(-[a-z0-9]+)*$/.test(id))).toBe(true);
    expect(ids.filter((id) => !readers.has(id))).toEqual([]);
    expect([...readers.keys()].filter((id) => !ids.includes(id))).toEqual([]);
  });

  it('a block marked not run gives a reason, and none is one that could run on the local stack', () => {
    const notRun = blocks.flatMap((block) => (block.marker?.kind === 'not run' ? [{ block, reason: block.marker.reason }] : []));
    for (const { block, reason } of notRun) {
      expect(reason.length, where(block)).toBeGreaterThan(10);
      // What talks to the local stack, or to its commands, can run, and so must.
      expect(block.text, where(block)).not.toMatch(/127\.0\.0\.1|localhost|npm (start|run (token|simulate))|examples\//);
    }
    // Kept small: the AWS commands, the smoke check of a deployed stage, and Ponder's own command.
    expect(notRun.length).toBeLessThanOrEqual(7);
  });
});

describe('rules, not history', () => {
  it('no prose of README.md or docs/ cites a date or a commit', () => {
    expect(pages.flatMap((page) => proseLines(page).flatMap(({ line, text }) => historyCited(`${page.file}:${line}`, text)))).toEqual([]);
  });

  it('no comment of packages/, infra/, test/ or the root configs cites a date or a commit', () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(200);
    expect(files.flatMap((file) => comments(file).flatMap(({ line, text }) => historyCited(`${file}:${line}`, text)))).toEqual([]);
  });

  it('finds a date and a commit in prose and comments, and not what only looks like one', () => {
    const page = parseDoc(
      'docs/x.md',
      [
        '# X',
        'Sizes as the bench printed them on 2026-11-26, against the code at `17eae4e`; see commit 0123456789abcdef0123456789abcdef01234567.',
        '<!-- not run: an example -->',
        '```json',
        '{ "at": "2026-11-25", "commit": "17eae4e" }',
        '```',
        'The Invoke API (`/2015-03-31/functions/…`) at 2026-01-01T12:00:00Z; wallet 0x00000000000000000000000000000000000000ab,',
        'https://d111111abcdef8.cloudfront.net, trace 1-5759e988-bd862e3fe1be46a994272793, nonce 9f86d081884c7d659a2feaa0c55ad015, deadbeef.',
      ].join('\n'),
    );
    expect(proseLines(page).flatMap(({ line, text }) => historyCited(`docs/x.md:${line}`, text))).toEqual([
      'docs/x.md:2: a date 2026-11-26',
      'docs/x.md:2: a commit 17eae4e',
      'docs/x.md:2: a commit 0123456789abcdef0123456789abcdef01234567',
    ]);
    const code = [
      '// Measured at 3f2a9c1 on 2026-11-26.',
      "const date = '2026-11-26'; // the fixture's day",
      'const pattern = /2026-11-26|3f2a9c1/; /* slimmed in 3f2a9c1 */',
      'const text = `// 2026-11-26 /* 3f2a9c1 */`;',
    ].join('\n');
    expect(comments('x.ts', code).flatMap(({ line, text }) => historyCited(`x.ts:${line}`, text))).toEqual([
      'x.ts:1: a date 2026-11-26',
      'x.ts:1: a commit 3f2a9c1',
      'x.ts:3: a commit 3f2a9c1',
    ]);
  });
});

describe('blocks checked without a stack', () => {
  it('the layout names paths that exist', () => {
    const block = docBlock('layout');
    const paths = block.text
      .split('\n')
      .filter((line) => /^\S/.test(line))
      .map((line) => line.split(/\s+/)[0]!);
    expect(paths.length).toBeGreaterThan(8);
    for (const path of paths) expect(existsSync(join(repository, path)), `${where(block)}: ${path}`).toBe(true);
    // Every package is in it, and every kind of test.
    for (const name of readdirSync(join(repository, 'packages'))) expect(paths, name).toContain(`packages/${name}`);
    for (const kind of readdirSync(join(repository, 'test'), { withFileTypes: true }).filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')))
      expect(paths, kind.name).toContain(`test/${kind.name}`);
  });

  it('the /health answer shown is one the health endpoint’s schema allows, field for field', () => {
    const block = docBlock('health-response');
    const shown: unknown = JSON.parse(block.text);
    expect(healthSchema.parse(shown)).toEqual(shown);
  });

  it('the hub snippet is examples/events.mjs’s own code (which test/stack/local/examples.test.ts runs), line for line in order', () => {
    expect(linesNotInFile(docBlock('events-snippet'), 'examples/events.mjs')).toEqual([]);
  });
});
