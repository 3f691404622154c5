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
      const remainingMs = Number(await (await fetch(`http://127.0.0.1:${port}/remaining`)).text());
      expect(remainingMs).toBeLessThanOrEqual(functionTimeoutSeconds.http * 1000);
      expect(remainingMs).toBeGreaterThan(functionTimeoutSeconds.http * 1000 - 2_000);
    } finally {
      server.close();
    }
  });
});
