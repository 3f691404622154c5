import dynalite from 'dynalite';
import type { Server } from 'node:http';

/** A real DynamoDB API (dynalite, in memory) on 127.0.0.1; resolves to its endpoint URL. */
export async function startDynalite(port = 0): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('dynalite did not bind');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
