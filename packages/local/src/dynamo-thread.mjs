// dynalite's server in a thread of its own (dynamo.ts): plain JavaScript, so no TypeScript loader is needed here.
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';

const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.once('error', (error) => parentPort.postMessage({ error: error.message }));
server.listen(workerData.port, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (message) => {
  if (message === 'stop') server.close(() => parentPort.close());
});
