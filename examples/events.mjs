// Prints the hub's events for one wallet: node examples/events.mjs [wallet]
// HATCHERY_URL is the stack's base URL (npm start prints it; http://127.0.0.1:3000 by default).
import * as signalR from '@microsoft/signalr';

const url = process.env.HATCHERY_URL ?? 'http://127.0.0.1:3000';
const wallet = process.argv[2] ?? '0x0000000000000000000000000000000000000001';

/** One line that says what went wrong and what to do, instead of SignalR's stack. */
function fail(message) {
  console.error(`examples/events.mjs: ${message}`);
  process.exit(1);
}
if (!/^0x[0-9a-fA-F]{40}$/.test(wallet)) fail(`'${wallet}' is not a wallet address: 0x followed by 40 hex characters`);

// SignalR's own lines once connected (a reconnect's warnings); before, fail() says in one line what went wrong.
let connected = false;
const logger = { log: (level, message) => connected && level >= signalR.LogLevel.Warning && console.warn(message) };

// A ping every 4 minutes keeps API Gateway's connection open (10 minutes idle) at a 16th of SignalR's default cost;
// the hub answers each, so more than two periods of silence means it is gone.
const hub = new signalR.HubConnectionBuilder()
  .withUrl(`${url}/hubs/events`)
  .withKeepAliveInterval(4 * 60_000)
  .withServerTimeout(9 * 60_000)
  .withAutomaticReconnect()
  .configureLogging(logger)
  .build();
hub.on('marketChanged', (event) => console.log('marketChanged', event));
hub.on('forgeFulfilled', (event) => console.log('forgeFulfilled', event));
// A new connection starts with no groups.
hub.onreconnected(() => hub.invoke('Subscribe', wallet));
try {
  await hub.start();
  await hub.invoke('Subscribe', wallet);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes('fetch failed')) fail(`no Hatchery answers at ${url}; start one with \`npm start\`, or set HATCHERY_URL to the URL it prints`);
  fail(`the hub at ${url} refused: ${message}`);
}
connected = true;
console.log('listening for', wallet, 'on', url);

for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => hub.stop().then(() => process.exit(0)));
