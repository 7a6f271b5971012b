import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Config } from '../../src/config/config.js';
import { Logger, parseLogLevel } from '../../src/log/logger.js';

const LINE = /^\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\] \[(debug|info|warning|error)\] \[<[\d.]+>\] (.*)$/;

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'settee-log-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs fn while capturing what is written to stderr. */
async function captureStderr(fn: () => Promise<void>): Promise<string> {
  const original = process.stderr.write;
  let captured = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stderr.write = original;
  }
  return captured;
}

async function messages(log: Logger): Promise<string[]> {
  await log.flush();
  const text = await readFile(log.file!, 'utf8').catch(() => '');
  return text.split('\n').filter((l) => l !== '').map((l) => {
    const m = LINE.exec(l);
    assert.ok(m, `not a CouchDB log line: ${l}`);
    return `${m[2]}:${m[3]}`;
  });
}

test('parseLogLevel maps CouchDB level names', () => {
  assert.equal(parseLogLevel('debug'), 'debug');
  assert.equal(parseLogLevel('warn'), 'warning');
  assert.equal(parseLogLevel('warning'), 'warning');
  assert.equal(parseLogLevel('none'), 'none');
  assert.equal(parseLogLevel('bogus'), 'error');
  assert.equal(parseLogLevel(undefined), 'info');
});

test('levels come from [log] level and follow live config changes', async () => {
  await withDir(async (dir) => {
    const config = Config.fromValues({ log: { level: 'info' } });
    const log = new Logger(join(dir, 'logs', 'settee.log'), { config });
    const stderr = await captureStderr(async () => {
      log.debug('d1');
      log.info('i1');
      log.warn('w1');
      log.error('e1');
      assert.deepEqual(await messages(log), ['info:i1', 'warning:w1', 'error:e1']);

      await config.set('log', 'level', 'debug', false);
      log.debug('d2');
      await config.set('log', 'level', 'error', false);
      log.info('i2');
      log.warn('w2');
      log.error('e2');
      await config.set('log', 'level', 'none', false);
      log.error('e3');
      await config.delete('log', 'level', false); // back to the default, info
      log.debug('d4');
      log.info('i4');
      assert.deepEqual(await messages(log), ['info:i1', 'warning:w1', 'error:e1', 'debug:d2', 'error:e2', 'info:i4']);
      await log.close();
      log.error('after close');
      await config.set('log', 'level', 'debug', false);
    });
    assert.equal(stderr, '', 'nothing on stderr by default');
    assert.equal((await readFile(join(dir, 'logs', 'settee.log'), 'utf8')).includes('after close'), false);
  });
});

test('stderr copy when asked for', async () => {
  await withDir(async (dir) => {
    const config = Config.fromValues({ log: { level: 'info', stderr: 'true' } });
    const log = new Logger(join(dir, 'settee.log'), { config });
    const stderr = await captureStderr(async () => {
      log.info('to both');
      await config.set('log', 'stderr', 'false', false);
      log.info('file only');
      await log.close();
    });
    assert.match(stderr, /\[info\] \[<[\d.]+>\] to both\n$/);
    assert.equal(stderr.includes('file only'), false);
  });
});

test('tail(bytes, offset) reads like CouchDB GET /_log', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'settee.log');
    const log = new Logger(file, { level: 'debug' });
    for (let i = 0; i < 20; i++) log.info(`line ${i}`);
    await log.flush();
    const content = await readFile(file, 'utf8');
    const size = content.length;

    assert.equal(await log.tail(1000000, 0), content);
    assert.equal(await log.tail(50, 0), content.slice(size - 50));
    assert.equal(await log.tail(50, 30), content.slice(size - 80, size - 30));
    assert.ok((await log.tail(50, 0)).endsWith('line 19\n'));
    // Start clamps at 0 and reads `bytes` bytes from there, as CouchDB's pread does.
    assert.equal(await log.tail(10, size + 5), content.slice(0, 10));
    assert.equal(await log.tail(0, 0), '');
    // tail waits for lines still in flight.
    log.info('very last');
    assert.ok((await log.tail(20, 0)).endsWith('very last\n'));
    await log.close();
  });
});

test('missing or unwritable log file never throws', async () => {
  await withDir(async (dir) => {
    const missing = new Logger(join(dir, 'never-written.log'));
    assert.equal(await missing.tail(100, 0), '');
    await missing.close();

    const blocker = join(dir, 'plain-file');
    await writeFile(blocker, 'x');
    const broken = new Logger(join(blocker, 'sub', 'settee.log'));
    const stderr = await captureStderr(async () => {
      broken.info('cannot be written');
      broken.error('still fine');
      await broken.flush();
      assert.equal(await broken.tail(100, 0), '');
      await broken.close();
    });
    assert.match(stderr, /cannot write log file/);
    assert.equal(stderr.match(/cannot write log file/g)!.length, 1, 'complains once');
  });
});
