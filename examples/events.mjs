// Prints the hub's events for one wallet: node examples/events.mjs [wallet]
// HATCHERY_URL is the stack's base URL (npm start prints it; http://127.0.0.1:3000 by default).
import * as signalR from '@microsoft/signalr';

const url = process.env.HATCHERY_URL ?? 'http://127.0.0.1:3000';
const wallet = process.argv[2] ?? '0x0000000000000000000000000000000000000001';

const hub = new signalR.HubConnectionBuilder()
  .withUrl(`${url}/hubs/events`)
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
