import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { httpRoutes } from '@hatchery/functions/routes';
import { startGateway, type RunningGateway } from '@hatchery/local/gateway/server';

/** The gateway takes its port at once but serves nothing until the stack says it is ready. */
let gateway: RunningGateway;
let ready = false;

beforeAll(async () => {
  // The handlers read a valid configuration; the routes used here never reach the database.
  Object.assign(process.env, { DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none', LOG_LEVEL: 'silent' });
  gateway = await startGateway({
    routes: Object.values(httpRoutes),
    port: 0,
    ipRequestsPerSecond: 0,
    isReady: () => ready,
    localEndpoints: {
      '/local': (_request, response) => {
        response.end('local');
      },
    },
    onUpgrade: (_request, socket) => socket.end('HTTP/1.1 418 Teapot\r\nContent-Length: 0\r\n\r\n'),
  });
});
afterAll(() => gateway?.close());

const upgradeStatus = () =>
  new Promise<number>((resolve) => {
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/hubs/events`);
    socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.on('error', () => undefined);
  });

it('answers API requests and hub upgrades 503 with Retry-After before the stack is ready; its own endpoints are served', async () => {
  const response = await fetch(`${gateway.url}/transparency/summary`);
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe('1');
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  expect(await response.json()).toMatchObject({ status: 503, detail: 'Hatchery is starting; try again in a moment.' });
  expect(await upgradeStatus()).toBe(503);
  expect(await (await fetch(`${gateway.url}/local`)).text()).toBe('local');
});

it('serves once ready', async () => {
  ready = true;
  expect((await fetch(`${gateway.url}/no/such/route`)).status).toBe(404);
  expect(await upgradeStatus()).toBe(418);
});
