// Receives Hatchery's webhooks and prints each event: WEBHOOK_SECRET=whsec_… PORT=4000 node examples/webhook-receiver.mjs
// WEBHOOK_SECRET is the endpoint's secret, as WEBHOOK_ENDPOINTS gives it to Hatchery (docs/webhooks.md).
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const port = Number(process.env.PORT ?? 4000);
const secret = process.env.WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_')) {
  console.error('examples/webhook-receiver.mjs: set WEBHOOK_SECRET to the endpoint’s secret, whsec_ and its base64');
  process.exit(1);
}
const webhook = new Webhook(secret);

// The webhook-ids already acted on. In memory, so a restart forgets them: a real receiver records each id in its
// database, in the transaction that acts on the event, so that a delivery sent again after its crash is dropped too.
const seen = new Set();

const server = http.createServer(async (request, response) => {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  let event;
  try {
    // The signature is over webhook-id, webhook-timestamp and the body's bytes as sent; the timestamp must be within 5 minutes.
    event = webhook.verify(Buffer.concat(chunks), request.headers);
  } catch (error) {
    console.error('refused:', error.message);
    return response.writeHead(400).end();
  }
  const id = request.headers['webhook-id'];
  if (!seen.has(id)) {
    seen.add(id);
    console.log(event.position, event.type, JSON.stringify(event.payload));
  }
  // Any 2xx, soon: anything else, or no answer within 10 s, is tried again.
  response.writeHead(204).end();
});
server.listen(port, '127.0.0.1', () => console.log(`receiving webhooks on http://127.0.0.1:${port}/`));

for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => process.exit(0)));
