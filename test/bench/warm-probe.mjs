// Run by warm.ts in a fresh Node.js process (plain JavaScript, so that no loader of the bench's runs in it), like a
// Lambda execution environment: imports one handler's bundle (pg left external), calls it, then measures its warm
// invocations beside the same SQL through pg in this process. The report is the last line of stdout, after the
// handler's own lines (its request log line and metrics, one EMF document per call).
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * WARM_PROBE_INPUT: { file, exportName, event, pg (the path of the pg the bundle imports), databaseUrl, calls,
 * warmup, blocks, sampledEvery, profile?: { file, calls, intervalUs } }
 */
const input = JSON.parse(process.env.WARM_PROBE_INPUT);
const { default: pg } = await import(pathToFileURL(input.pg).href);

// Every statement the handler sends goes through a pg Client (its pool's): kept as given, read once the calls are timed.
let recording;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, values, ...rest) {
  recording?.push([config, values]);
  return query.call(this, config, values, ...rest);
};
const statementOf = ([config, values]) =>
  typeof config === 'string'
    ? { text: config, values: Array.isArray(values) ? values : [] }
    : { text: config.text, values: Array.isArray(values) ? values : (config.values ?? []) };

const context = (id) => ({
  awsRequestId: `warm-${id}`,
  functionName: 'warm',
  functionVersion: '$LATEST',
  memoryLimitInMB: '1024',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 10000,
});

const report = {};
try {
  const started = performance.now();
  const module = await import(pathToFileURL(input.file).href);
  report.importMs = performance.now() - started;
  const handler = module[input.exportName];
  let invocation = 0;
  // Lambda sets the trace header per invocation; X-Ray's default rule samples the first request of each second and
  // 5% of the rest, which for a busy function is about one call in `sampledEvery`.
  const traceHeader = process.env._X_AMZN_TRACE_ID;
  const call = async () => {
    if (traceHeader && input.sampledEvery)
      process.env._X_AMZN_TRACE_ID = traceHeader.replace(/Sampled=\d/, `Sampled=${invocation % input.sampledEvery === 0 ? 1 : 0}`);
    const result = await handler(input.event, context(invocation++));
    if (result?.statusCode !== 200) throw new Error(`status ${result?.statusCode}: ${String(result?.body).slice(0, 300)}`);
    return result;
  };
  /** `n` calls, each one's statements recorded. */
  const calls = async (n) => {
    const sent = [];
    for (let i = 0; i < n; i++) {
      recording = [];
      await call();
      sent.push(recording);
    }
    recording = undefined;
    return sent;
  };
  const first = await call();
  const body = typeof first.body === 'string' && first.body.startsWith('{') ? JSON.parse(first.body) : undefined;
  if (Array.isArray(body?.items)) report.items = body.items.length;

  // The baseline: each call's statements through a pool of this process's pg, in order, their rows serialized as a
  // minimal server would answer them.
  const pool = new pg.Pool({ connectionString: input.databaseUrl, max: 1 });
  const replay = async (sent) => {
    for (const statements of sent) {
      for (const statement of statements.map(statementOf)) JSON.stringify((await pool.query(statement.text, statement.values)).rows);
    }
  };
  await replay(await calls(input.warmup));

  if (input.profile) {
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: input.profile.intervalUs });
    await session.post('Profiler.start');
    await calls(input.profile.calls);
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(input.profile.file, JSON.stringify(profile));
    session.disconnect();
  } else {
    // Blocks of calls, each followed by its replay, so that a machine that gets busier weighs on both alike.
    let handlerUs = 0;
    let baselineUs = 0;
    let statements = 0;
    const perBlock = Math.ceil(input.calls / input.blocks);
    for (let done = 0; done < input.calls; done += perBlock) {
      let cpu = process.cpuUsage();
      const sent = await calls(Math.min(perBlock, input.calls - done));
      let used = process.cpuUsage(cpu);
      handlerUs += used.user + used.system;
      cpu = process.cpuUsage();
      await replay(sent);
      used = process.cpuUsage(cpu);
      baselineUs += used.user + used.system;
      statements += sent.reduce((sum, each) => sum + each.length, 0);
    }
    Object.assign(report, { handlerUs: handlerUs / input.calls, baselineUs: baselineUs / input.calls, statementsPerCall: statements / input.calls });
  }
  await pool.end();
} catch (error) {
  report.error = String(error?.stack ?? error);
}
process.stdout.write(`\nWARM ${JSON.stringify(report)}\n`);
// Lets the last subsegments' UDP sends leave before the process does.
await new Promise((resolve) => setTimeout(resolve, 100));
process.exit(0);
