/** Hub clients by the thousand, in a process of their own (test/support/child.ts runs `crowdMain`). */

/** What the crowd saw since it connected, or since its last `reset`. */
export interface CrowdReport {
  /** Connections whose last marketChanged is not the final listings. */
  behind: number;
  /** When the last connection had its last marketChanged (wall clock). */
  lastArrival: number;
  /** Frames a connection received more than once. */
  duplicates: number;
  /** Frames the gateway sent for a message in over the quota. */
  throttledFrames: number;
  /** The client process's CPU seconds so far and resident memory. */
  cost: { cpuSeconds: number; rssMb: number };
}

/**
 * The 5,000 hub clients, in a process of their own (10,000 sockets would
 * crowd the stack's event loop): plain WebSocket clients speaking the SignalR
 * JSON handshake, keeping each connection's last marketChanged and counting
 * any frame that reaches a connection twice.
 */
export function crowdMain(): void {
  const { WebSocket: Socket } = require('ws') as typeof import('ws');
  const separator = '\u001e';
  const now = () => performance.timeOrigin + performance.now();
  const sockets: import('ws').WebSocket[] = [];
  const last: Array<{ count: number; maxBlock: string; version: number; at: number } | null> = [];
  const seen: Array<Set<string>> = [];
  let duplicates = 0;
  let throttledFrames = 0;
  const open = (url: string, index: number) =>
    new Promise<void>((resolve, reject) => {
      const socket = new Socket(url, { perMessageDeflate: false });
      const fail = (error: Error) => {
        socket.terminate();
        reject(error);
      };
      socket.once('error', fail);
      socket.once('open', () => socket.send(`{"protocol":"json","version":1}${separator}`));
      socket.once('message', (data) => {
        if (data.toString() !== `{}${separator}`) return fail(new Error(`handshake answered ${data.toString()}`));
        sockets[index] = socket;
        last[index] = null;
        seen[index] = new Set();
        socket.on('message', (more) => {
          for (const record of more.toString().split(separator)) {
            if (!record) continue;
            if (seen[index]!.has(record)) duplicates++;
            seen[index]!.add(record);
            if (record.startsWith('{"message":"Too many requests"')) throttledFrames++;
            const parsed = JSON.parse(record) as { target?: string; arguments?: Array<{ count: number; maxBlock: string; version: number }> };
            if (parsed.target === 'marketChanged') last[index] = { ...parsed.arguments![0]!, at: now() };
          }
        });
        resolve();
      });
    });
  process.on('message', async (command: { cmd: string; url?: string; count?: number; final?: { count: number; maxBlock: string } }) => {
    if (command.cmd === 'connect') {
      let next = 0;
      let failed = 0;
      // A connect or handshake over the quota is refused (429, or the gateway's frame): tried again, as a client reconnects.
      const connect = async (index: number) => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await open(command.url!, index);
          } catch (error) {
            failed++;
            if (attempt === 20) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
          }
        }
      };
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < command.count!) await connect(next++).catch(() => undefined);
        }),
      );
      process.send!({ cmd: 'connected', connected: sockets.filter(Boolean).length, failed });
    } else if (command.cmd === 'report') {
      const { count, maxBlock } = command.final!;
      const behind = last.filter((each) => !(each?.count === count && each.maxBlock === maxBlock)).length;
      const lastArrival = Math.max(...last.map((each) => each?.at ?? Infinity));
      // What 5,000 light clients cost this machine: the process's CPU so far and its memory.
      const { user, system } = process.cpuUsage();
      const cost = { cpuSeconds: (user + system) / 1e6, rssMb: process.memoryUsage().rss / 2 ** 20 };
      process.send!({ cmd: 'report', behind, lastArrival, duplicates, throttledFrames, cost });
    } else if (command.cmd === 'reset') {
      // Another scenario on the same connections: its report is of what arrives from now on. The frames seen are kept,
      // so one that comes again is still a duplicate.
      last.fill(null);
      duplicates = 0;
      throttledFrames = 0;
      process.send!({ cmd: 'reset' });
    } else if (command.cmd === 'close') {
      for (const socket of sockets) socket?.terminate();
      process.exit(0);
    }
  });
  process.send!({ cmd: 'ready' });
}
