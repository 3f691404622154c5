import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { healthSchema } from '@hatchery/core/health';
import { docBlock, docPages, githubSlug, parseDoc, repository, where, type DocPage } from '../../support/docs';

/**
 * A README of at most 250 lines, docs/ one page per topic, every
 * relative link and anchor resolving, and every fenced block either run by a
 * test (`<!-- tested: id -->`, which a test reads through docBlock) or marked with why it
 * cannot run here (`<!-- not run: reason -->`). The blocks checked without a
 * stack are checked here too.
 */
const pages = docPages();

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
      ['benchmarks', 'client', 'deploying', 'http-api', 'local-stack', 'operating', 'ponder', 'realtime'].map((name) => `docs/${name}.md`),
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

describe('blocks checked without a stack', () => {
  it('the layout names paths that exist', () => {
    const block = docBlock('layout');
    const paths = block.text
      .split('\n')
      .filter((line) => /^\S/.test(line))
      .map((line) => line.split(/\s+/)[0]!);
    expect(paths.length).toBeGreaterThan(8);
    for (const path of paths) expect(existsSync(join(repository, path)), `${where(block)}: ${path}`).toBe(true);
    // Every package is in it.
    for (const name of readdirSync(join(repository, 'packages'))) expect(paths, name).toContain(`packages/${name}`);
  });

  it('the /health answer shown is one the health endpoint’s schema allows, field for field', () => {
    const block = docBlock('health-response');
    const shown: unknown = JSON.parse(block.text);
    expect(healthSchema.parse(shown)).toEqual(shown);
  });

  it('the hub snippet is examples/events.mjs’s own code (which test/local/examples.test.ts runs), line for line in order', () => {
    const block = docBlock('events-snippet');
    const file = readFileSync(join(repository, 'examples', 'events.mjs'), 'utf8')
      .split('\n')
      .map((line) => line.trim());
    let from = 0;
    for (const line of block.text.split('\n')) {
      const code = line.replace(/\s+\/\/ .*$/, '').trim();
      if (!code) continue;
      const at = file.indexOf(code, from);
      expect(at, `${where(block)}: ${code}`).toBeGreaterThanOrEqual(from);
      from = at + 1;
    }
  });
});
