/**
 * The one Node.js major Hatchery runs on: the functions' Lambda runtime and
 * the listener's image (whose bundle targets the Node that builds it, the
 * image's own). test/deploy/runtime.test.ts holds to it what cannot import
 * it: the project's own Node that every npm script and test runs on (the
 * npm package `node`, a devDependency), `engines`, and the Dockerfile's
 * default for a build by hand.
 */
export const nodeMajor = 24;

/** A literal type, so SST's own union of runtimes checks it. */
export const lambdaRuntime = `nodejs${nodeMajor}.x` as const;

/** The listener's Dockerfile takes its base image's major as this build argument. */
export const listenerImageArgs = { NODE_MAJOR: String(nodeMajor) };
