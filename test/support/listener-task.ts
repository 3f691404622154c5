import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { buildOptions } from '../../packages/listener/build.mjs';
import type { TestStack } from './stack';

/** The listener bundled as the Dockerfile builds it, into `dir`: what `listenerTask` runs. */
export async function buildListener(dir: string): Promise<string> {
  const file = join(dir, 'listener.mjs');
  await esbuild.build(buildOptions(file));
  return file;
}

/** A listener task as the container runs it, in a process of its own, against `stack`; its log lines as they come. */
export function listenerTask(bundle: string, stack: TestStack, env: Record<string, string> = {}): { child: ChildProcess; logged: string[] } {
  const child = spawn(process.execPath, [bundle], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: stack.databaseUrl,
      WEBSOCKET_MANAGEMENT_ENDPOINT: stack.url,
      DYNAMODB_ENDPOINT: stack.dynamoEndpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logged: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => logged.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  return { child, logged };
}
