/**
 * One Node.js major everywhere (infra/runtime.ts): what cannot import it is
 * held to it here. The deploy test checks what infra/ builds from it (the
 * functions' runtime, the listener image's build argument).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { buildOptions } from '../../packages/listener/build.mjs';
import { lambdaRuntime, nodeMajor } from '../../infra/runtime';

const root = join(import.meta.dirname, '..', '..');
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string }; devDependencies: Record<string, string> };

it('runs the tests on the Node that production runs: the project’s own, the npm package node', () => {
  expect(rootPackage.devDependencies.node).toMatch(new RegExp(`^\\^${nodeMajor}\\.`));
  expect(Number(process.versions.node.split('.')[0])).toBe(nodeMajor);
});

it('states that major as the supported minimum in engines, and types Node’s API at it', () => {
  expect(rootPackage.engines.node).toBe(`>=${nodeMajor}`);
  expect(rootPackage.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${nodeMajor}\\.`));
});

it('gives the Lambda runtime and the listener’s Dockerfile the same major', () => {
  expect(lambdaRuntime).toBe(`nodejs${nodeMajor}.x`);
  const dockerfile = readFileSync(join(root, 'packages/listener/Dockerfile'), 'utf8');
  expect(dockerfile).toContain(`ARG NODE_MAJOR=${nodeMajor}\n`);
  const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
  expect(bases).toEqual(['node:${NODE_MAJOR}-slim', 'node:${NODE_MAJOR}-slim']);
});

it('bundles the listener for the Node that builds it, which in the image is the one that runs it', () => {
  expect(buildOptions('out.mjs').target).toBe(`node${nodeMajor}`);
});
