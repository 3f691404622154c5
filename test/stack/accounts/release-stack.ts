/**
 * A release's own local stack, on a database and a DynamoDB API it is given.
 * test/stack/accounts/releases.ts copies this file into a release's tree taken from
 * git, so `@hatchery/local/stack` below is that release's startStack, its
 * handlers, its migrations and its identity provider, not today's.
 *
 * Argument: `{ dataDir, databaseUrl, dynamoEndpoint }` as JSON. Once ready it
 * prints `{ "url": … }` as one JSON line on stdout; on the IPC channel it
 * answers `{ id, claims }` with `{ id, token }` signed by that release's
 * identity provider; SIGTERM, or the loss of the IPC channel, stops it.
 *
 * Every option used here is in every release's StackOptions since the first
 * migration (git show <commit>:packages/local/src/stack.ts), so this file
 * needs no per-release branch; it is type-checked against today's.
 */
import { startStack } from '@hatchery/local/stack';

interface Arguments {
  dataDir: string;
  databaseUrl: string;
  dynamoEndpoint: string;
}

interface TokenRequest {
  id: number;
  claims: { uid: string; email?: string; name?: string };
}

const { dataDir, databaseUrl, dynamoEndpoint } = JSON.parse(process.argv[2] ?? '{}') as Arguments;
const stack = await startStack({
  port: 0,
  dataDir,
  persistent: true,
  databaseUrl,
  dynamoEndpoint,
  demoData: false,
  listener: false,
  // One Lambda worker thread: the test makes no fan-out, and each thread compiles the handlers again.
  fanOutWorkers: 1,
});

process.on('message', (request: TokenRequest) => {
  stack.idp.signToken(request.claims).then(
    (token) => process.send?.({ id: request.id, token }),
    (error: Error) => process.send?.({ id: request.id, error: error.message }),
  );
});
let stopping = false;
const stop = () => {
  // Once: a second signal must not exit while the first stop still closes the stack.
  if (stopping) return;
  stopping = true;
  // A stop that fails shows in the test: stop() there wants code 0, and prints stderr otherwise.
  stack.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.once('SIGTERM', stop);
// The test's process went without stopping it (killed, or crashed): no stack of an old release is left running.
process.once('disconnect', stop);
process.stdout.write(`${JSON.stringify({ url: stack.url })}\n`);
