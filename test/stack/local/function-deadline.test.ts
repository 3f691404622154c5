import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { functionTimeoutSeconds } from '@hatchery/functions/function-timeouts';
import type { HttpRoute } from '@hatchery/functions/routes';
import { httpApi } from '@hatchery/local/gateway/http';

describe('the local gateway’s HTTP invocations', () => {
  it('have the deadline the deployed functions have', async () => {
    const route = { method: 'GET', path: '/remaining', handler: 'test/stack/local/fixtures/remaining-time.handler', auth: 'none' } as unknown as HttpRoute;
    const api = httpApi([route]);
    const server = createServer((request, response) => void api(request, response, new URL(request.url ?? '/', 'http://localhost')));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const started = performance.now();
      const remainingMs = Number(await (await fetch(`http://127.0.0.1:${port}/remaining`)).text());
      const askedWithinMs = Math.ceil(performance.now() - started);
      // The whole timeout, less what passed between the invocation's start and the handler's question, which the
      // request's round trip holds.
      expect(remainingMs).toBeLessThanOrEqual(functionTimeoutSeconds.http * 1000);
      expect(remainingMs).toBeGreaterThanOrEqual(functionTimeoutSeconds.http * 1000 - askedWithinMs - 1);
    } finally {
      server.close();
    }
  });
});
