/**
 * The post-deploy smoke check, from outside a stage:
 *   npm run smoke -- <base url> [--origin <allowed origin>] [--token <token>]
 *     [--address <wallet>] [--event-timeout <seconds>] [--require-event]
 * Prints a table of pass/fail with timings; exits 1 when a check fails, 2 on bad arguments.
 */
import { parseArgs } from 'node:util';
import { defaultAddress, formatResults, runSmoke } from './checks';

function usage(message: string): never {
  console.error(
    `${message}\nusage: npm run smoke -- <base url> [--origin <origin>] [--token <token>] [--address <wallet>] [--event-timeout <seconds>] [--require-event]`,
  );
  process.exit(2);
}

let parsed: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    allowPositionals: true,
    options: {
      origin: { type: 'string' },
      token: { type: 'string' },
      address: { type: 'string', default: defaultAddress },
      'event-timeout': { type: 'string', default: '15' },
      'require-event': { type: 'boolean', default: false },
    },
  });
}
try {
  parsed = parse();
} catch (error) {
  usage((error as Error).message);
}
const [baseUrl] = parsed.positionals;
if (!baseUrl || !URL.canParse(baseUrl)) usage('a base URL is required, such as https://d111111abcdef8.cloudfront.net');
const seconds = Number(parsed.values['event-timeout']);
if (!Number.isFinite(seconds) || seconds <= 0) usage('--event-timeout must be a positive number of seconds');
if (!/^0x[0-9a-fA-F]{40}$/.test(parsed.values.address!)) usage('--address must be 0x followed by 40 hex characters');

const results = await runSmoke({
  baseUrl,
  origin: parsed.values.origin,
  token: parsed.values.token,
  address: parsed.values.address!,
  eventTimeoutMs: seconds * 1000,
  requireEvent: parsed.values['require-event']!,
});
console.log(formatResults(results));
process.exit(results.some((result) => result.outcome === 'fail') ? 1 : 0);
