// Prints the hub's events for one wallet: node examples/events.mjs [wallet]
// HATCHERY_URL is the stack's base URL (npm start prints it; http://127.0.0.1:3000 by default).
import * as signalR from '@microsoft/signalr';

const url = process.env.HATCHERY_URL ?? 'http://127.0.0.1:3000';
const wallet = process.argv[2] ?? '0x0000000000000000000000000000000000000001';

// A ping every 4 minutes keeps API Gateway's connection open (10 minutes idle) at a 16th of SignalR's default cost;
// the hub answers each, so more than two periods of silence means it is gone.
const hub = new signalR.HubConnectionBuilder()
  .withUrl(`${url}/hubs/events`)
  .withKeepAliveInterval(4 * 60_000)
  .withServerTimeout(9 * 60_000)
  .withAutomaticReconnect()
  .configureLogging(signalR.LogLevel.Warning)
  .build();
hub.on('marketChanged', (event) => console.log('marketChanged', event));
hub.on('forgeFulfilled', (event) => console.log('forgeFulfilled', event));
// A new connection starts with no groups.
hub.onreconnected(() => hub.invoke('Subscribe', wallet));
await hub.start();
await hub.invoke('Subscribe', wallet);
console.log('listening for', wallet, 'on', url);

for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => hub.stop().then(() => process.exit(0)));
