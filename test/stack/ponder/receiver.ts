import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** An event as a webhook delivers it (core/events/replay.ts's LoggedEvent, as the wire has it). */
export interface DeliveredEvent {
  id: string;
  position: number;
  type: string;
  blockNumber: string;
  entity: string;
  payload: Record<string, string | number>;
  reverts?: { id: string; position: number };
}

/** One delivery: when it arrived, its event, and what `atArrival` said then. */
export interface Delivery<Note> {
  at: number;
  event: DeliveredEvent;
  note: Note;
}

/**
 * A receiver as docs/webhooks.md has one, on loopback: it verifies each request's Standard Webhooks signature
 * with its secret (answering 401 to one that fails), keeps every delivery, and reads `atArrival()` for each
 * before it answers, so a test can say what held when the delivery came (a checkpoint, say).
 */
export async function webhookReceiver<Note>(atArrival: () => Promise<Note>) {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const verifier = new Webhook(secret);
  const deliveries: Delivery<Note>[] = [];
  const refused: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString();
      let event: DeliveredEvent;
      try {
        event = verifier.verify(body, request.headers as Record<string, string>) as DeliveredEvent;
      } catch (error) {
        refused.push(String(error));
        return void response.writeHead(401).end();
      }
      deliveries.push({ at, event, note: await atArrival() });
      response.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    secret,
    deliveries,
    /** Requests whose signature did not verify: there should be none. */
    refused,
    /** The first delivery of an event that `match` accepts (a delivery may come twice, with the same id). */
    find: (match: (event: DeliveredEvent) => boolean) => deliveries.find((delivery) => match(delivery.event)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type WebhookReceiver<Note> = Awaited<ReturnType<typeof webhookReceiver<Note>>>;
