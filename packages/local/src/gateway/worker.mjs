// A worker thread of the local Lambda service (workers.ts): TypeScript is compiled on the fly, as `npm start` does in the main thread.
import { register } from 'tsx/esm/api';

register();
await import('./worker-main.ts');
