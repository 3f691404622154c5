import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';

/**
 * A page of another origin, as a game's front end would be: it loads
 * @microsoft/signalr's browser build (served here, from the package) and
 * exposes `run()`, which subscribes to a wallet's events and calls the API
 * with CORS, logging everything on the page.
 */
const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hatchery from another origin</title>
<script src="/signalr.js"></script>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:2rem}pre{background:#f4f4f4;padding:1rem;white-space:pre-wrap}</style>
</head><body>
<h1>Hatchery events, from <span id="origin"></span></h1>
<pre id="log"></pre>
<script>
document.getElementById('origin').textContent = location.origin;
const log = (line) => { document.getElementById('log').textContent += line + '\\n'; };
window.events = [];
window.run = async ({ api, wallet, token, skipNegotiation }) => {
  const options = skipNegotiation ? { skipNegotiation: true, transport: signalR.HttpTransportType.WebSockets } : {};
  const hub = new signalR.HubConnectionBuilder().withUrl(api + '/hubs/events', options).configureLogging(signalR.LogLevel.None).build();
  for (const name of ['marketChanged', 'forgeFulfilled']) {
    hub.on(name, (event) => { window.events.push({ name, event }); log(name + ' ' + JSON.stringify(event)); });
  }
  const result = {};
  try {
    await hub.start();
    await hub.invoke('Subscribe', wallet);
    result.subscribed = true;
    log('subscribed to ' + wallet + (skipNegotiation ? ' (WebSocket, no negotiation)' : ' (after negotiate)'));
  } catch (error) {
    result.hubError = String(error);
    log('hub refused: ' + error);
  }
  for (const [name, path, init] of [['editions', '/editions?pageSize=1', {}], ['me', '/accounts/me', { headers: { authorization: 'Bearer ' + token } }]]) {
    try {
      const response = await fetch(api + path, init);
      result[name] = { status: response.status, body: await response.json() };
      log('GET ' + path + ' → ' + response.status + ' ' + JSON.stringify(result[name].body).slice(0, 120));
    } catch (error) {
      result[name + 'Error'] = String(error);
      log('GET ' + path + ' refused: ' + error);
    }
  }
  return result;
};
</script></body></html>`;

export interface OriginPage {
  origin: string;
  close(): Promise<void>;
}

export async function serveOriginPage(): Promise<OriginPage> {
  const signalr = await readFile(createRequire(import.meta.url).resolve('@microsoft/signalr/dist/browser/signalr.js'));
  const server: Server = createServer((request, response) => {
    if (request.url === '/signalr.js') {
      response.writeHead(200, { 'content-type': 'text/javascript' });
      response.end(signalr);
    } else if (request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(html);
    } else {
      response.writeHead(404).end();
    }
  });
  return listenOnLoopback(server);
}

/** Serves a page's own origin on a free loopback port (another origin than the stack's, as a front end's is). */
export async function listenOnLoopback(server: Server): Promise<OriginPage> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the page server did not bind');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
