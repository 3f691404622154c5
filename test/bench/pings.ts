import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { wsRoutes, type WsEvent } from '@hatchery/functions/routes/realtime';
import { bundleHandlers, probe, repositoryRoot, stackBacking, tracingEnvironment, xrayDaemon, type Probe } from '../support/bundles';
import { exportBaseline, summarize } from './baseline';
import type { BenchSection } from './context';

/**
 * What a hub client's ping costs: the $default function's CPU per ping as
 * deployed (info logs, metrics, tracing), answered in place (its return
 * value, through the route response) beside the same function at
 * BENCH_PING_BASELINE_REF, by default the last commit whose $default answered
 * through the management API (PostToConnection to the local gateway). Each in fresh processes, round-robin, in this run.
 */
const runs = Number(process.env.BENCH_COLD_START_RUNS ?? 5);
const warmCalls = Number(process.env.BENCH_WARM_CALLS ?? 1000);
/** The last commit before $default answered in place, unless BENCH_PING_BASELINE_REF names another. */
const baselineRef = () =>
  process.env.BENCH_PING_BASELINE_REF ??
  `${execFileSync('git', ['log', '--reverse', '--format=%H', '-S', 'answersInPlace', '--', 'packages/functions/src/routes/realtime.ts'], { cwd: repositoryRoot, encoding: 'utf8' }).split('\n')[0]}^`;

const pingEvent = (connectionId: string): WsEvent => ({
  requestContext: {
    routeKey: '$default',
    eventType: 'MESSAGE',
    messageId: 'bench-ping',
    extendedRequestId: 'bench-ping',
    requestTime: '25/Nov/2026:00:00:00 +0000',
    messageDirection: 'IN',
    stage: '$default',
    connectedAt: Date.now(),
    requestTimeEpoch: Date.now(),
    identity: { sourceIp: '127.0.0.1' },
    requestId: 'bench-ping',
    domainName: '127.0.0.1',
    connectionId,
    apiId: 'local',
  },
  body: '{"type":6}\u001e',
  isBase64Encoded: false,
});

export const pingsBench: BenchSection = async ({ stack }) => {
  const workdir = mkdtempSync(join(tmpdir(), 'hatchery-pings-'));
  const daemon = await xrayDaemon();
  // A live connection for the baseline's posts to reach (a gone one would take the shorter 410 path).
  const before = new Set(stack.hub.connections.keys());
  const socket = new WebSocket(`${stack.url.replace('http', 'ws')}/hubs/events`);
  await once(socket, 'open');
  socket.on('message', () => undefined);
  const connectionId = [...stack.hub.connections.keys()].find((id) => !before.has(id))!;
  try {
    const handler = wsRoutes.find((route) => route.routeKey === '$default')!.handler;
    const baselineDir = join(workdir, 'baseline');
    const commit = exportBaseline(baselineDir, baselineRef());
    const [head] = await bundleHandlers([handler], join(workdir, 'head'));
    const [baseline] = await bundleHandlers([handler], join(workdir, 'base'), baselineDir);
    // As deployed: one line per invocation at info, metrics, tracing on.
    const env = { ...stackBacking(stack), LOG_LEVEL: 'info', WEBSOCKET_MANAGEMENT_ENDPOINT: stack.url, ...tracingEnvironment(daemon.port) };
    const modes = [
      { name: `posted (${commit}, before)`, bundle: baseline!, probes: [] as Probe[] },
      { name: 'answered in place (now)', bundle: head!, probes: [] as Probe[] },
    ];
    for (let i = 0; i < runs; i++) for (const mode of modes) mode.probes.push((await probe(mode.bundle, pingEvent(connectionId), env, { warmCalls })).probe);
    const [posted, inPlace] = modes.map((mode) => summarize(mode.probes));
    console.log(
      `\n$default: CPU per ping (median of ${runs} fresh Node.js ${process.versions.node} processes, ${warmCalls} warm calls each; info logs, metrics and tracing on)`,
    );
    console.log(`${'mode'.padEnd(34)} ${'KB'.padStart(6)} ${'import ms'.padStart(10)} ${'warm CPU µs'.padStart(12)} ${'ratio'.padStart(7)}`);
    for (const [index, mode] of modes.entries()) {
      const result = index === 0 ? posted! : inPlace!;
      const ratio = posted?.warmCpuUs && result.warmCpuUs ? (result.warmCpuUs / posted.warmCpuUs).toFixed(2) : '-';
      const cpu = result.error ? result.error.split('\n')[0]! : (result.warmCpuUs?.toFixed(0) ?? '-');
      console.log(
        `${mode.name.padEnd(34)} ${(mode.bundle.bytes / 1024).toFixed(0).padStart(6)} ${result.importMs?.toFixed(0).padStart(10) ?? '-'.padStart(10)} ${cpu.padStart(12)} ${ratio.padStart(7)}`,
      );
    }
    console.log('(ratio: warm CPU against the posted answer; the management API it posts to runs in the bench process, not counted)');
  } finally {
    socket.terminate();
    await daemon.close();
    rmSync(workdir, { recursive: true, force: true });
  }
};
