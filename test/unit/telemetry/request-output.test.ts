import type { Context } from 'aws-lambda';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

// stdout.ts takes writeSync from Node's CommonJS fs when it is first imported (below, in each test): spied on before that.
const fs = process.getBuiltinModule('node:fs');
const writeSync = vi.spyOn(fs, 'writeSync').mockImplementation(() => 0);
afterAll(() => writeSync.mockRestore());

/** The lines a request ends with leave in one write; any other line leaves at once. */
describe('held lines', () => {
  afterEach(() => writeSync.mockReset());

  it('writes the lines written between hold and release with one write, in order, and others at once', async () => {
    const { holdLines, releaseLines, writeLine } = await import('@hatchery/platform/stdout');
    const written: string[] = [];
    writeSync.mockImplementation(((_fd: number, data: string | Uint8Array) => {
      const text = typeof data === 'string' ? data : Buffer.from(data).toString();
      written.push(text);
      return Buffer.byteLength(text);
    }) as typeof fs.writeSync);
    writeLine('before\n');
    holdLines();
    writeLine('log line\n');
    writeLine('metrics\n');
    expect(written).toEqual(['before\n']);
    releaseLines();
    writeLine('after\n');
    releaseLines();
    expect(written).toEqual(['before\n', 'log line\nmetrics\n', 'after\n']);
  });

  it('finishes a partial write from where it stopped, and retries one the pipe refused (EAGAIN)', async () => {
    const { writeLine } = await import('@hatchery/platform/stdout');
    const chunks: string[] = [];
    let call = 0;
    writeSync.mockImplementation(((_fd: number, data: string | Uint8Array, offset?: number) => {
      call++;
      if (call === 2) throw Object.assign(new Error('busy'), { code: 'EAGAIN' });
      const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data).subarray(offset ?? 0);
      const taken = call === 1 ? 4 : bytes.length;
      chunks.push(bytes.subarray(0, taken).toString());
      return taken;
    }) as typeof fs.writeSync);
    writeLine('héllo wörld\n');
    expect(chunks.join('')).toBe('héllo wörld\n');
  });

  it('sleeps while the pipe stays full instead of spinning on the core its reader needs', async () => {
    const { writeLine } = await import('@hatchery/platform/stdout');
    const fullForMs = 30;
    const started = performance.now();
    let attempts = 0;
    writeSync.mockImplementation(((_fd: number, data: string | Uint8Array) => {
      attempts++;
      if (performance.now() - started < fullForMs) throw Object.assign(new Error('busy'), { code: 'EAGAIN' });
      return typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    }) as typeof fs.writeSync);
    const cpu = process.threadCpuUsage();
    writeLine('a line\n');
    const used = process.threadCpuUsage(cpu);
    const elapsedMs = performance.now() - started;
    expect(elapsedMs).toBeGreaterThanOrEqual(fullForMs);
    // A writer that spins tries thousands of times in 30 ms and burns all of the time it waits, however long a busy
    // machine stretches it (a share of a core at least); one that sleeps burns a little of it.
    expect(attempts).toBeLessThanOrEqual(fullForMs + 1);
    expect((used.user + used.system) / 1000).toBeLessThan(elapsedMs / 3);
  });
});

describe('requestOutput', () => {
  afterEach(() => writeSync.mockReset());

  it('holds the lines the middlewares between hold and release write as a request ends, answered or failed, and writes them at once in one write', async () => {
    const { writeLine } = await import('@hatchery/platform/stdout');
    const { requestOutput } = await import('@hatchery/functions/middleware/request-output');
    const { default: middy } = await import('@middy/core');
    const written: string[] = [];
    writeSync.mockImplementation(((_fd: number, data: string | Uint8Array) => {
      const text = typeof data === 'string' ? data : Buffer.from(data).toString();
      written.push(text);
      return Buffer.byteLength(text);
    }) as typeof fs.writeSync);
    const output = requestOutput<{ fail: boolean }, string, Context>();
    // As the HTTP chain writes its request's log line and metrics: in `after` or `onError`, between release and hold.
    const ending = () => {
      writeLine('log line\n');
      writeLine('metrics\n');
    };
    const handler = middy<{ fail: boolean }, string, Error, Context>()
      .use(output.release)
      .use({ after: ending, onError: ending })
      .use(output.hold)
      .handler(async ({ fail }) => {
        writeLine('handler line\n');
        if (fail) throw new Error('failed');
        return 'answered';
      });
    await handler({ fail: false }, {} as Context);
    await handler({ fail: true }, {} as Context).catch(() => undefined);
    writeLine('between requests\n');
    expect(written).toEqual(['handler line\n', 'log line\nmetrics\n', 'handler line\n', 'log line\nmetrics\n', 'between requests\n']);
  });
});
