// The log destination drops lines (and counts them) while its stream holds more than the high-water mark, says how
// many once lines get through again, and survives a stream error (EPIPE) instead of crashing the process.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { boundedLogDestination } from '../../src/rest/log-destination.js';

/** A stream whose buffered length the test sets (a reader that stops and resumes). */
class FakeStream extends EventEmitter {
  writableLength = 0;
  lines: string[] = [];
  write(chunk: string): boolean {
    this.lines.push(chunk);
    return true;
  }
}

describe('boundedLogDestination', () => {
  it('drops and counts lines over the high-water mark, then reports them', () => {
    const stream = new FakeStream();
    const dest = boundedLogDestination(stream, 100);
    dest.write('a\n');
    stream.writableLength = 101;
    dest.write('b\n');
    dest.write('c\n');
    expect(dest.dropped).toBe(2);
    stream.writableLength = 0;
    dest.write('d\n');
    expect(stream.lines[0]).toBe('a\n');
    expect(JSON.parse(stream.lines[1]!)).toMatchObject({
      level: 40,
      msg: 'log lines dropped: stdout was not read',
      dropped: 2,
    });
    expect(stream.lines[2]).toBe('d\n');
    expect(dest.dropped).toBe(2);
  });

  it('drops everything after a stream error instead of throwing', () => {
    const stream = new FakeStream();
    const dest = boundedLogDestination(stream, 100);
    expect(() =>
      stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })),
    ).not.toThrow();
    dest.write('a\n');
    expect(stream.lines).toEqual([]);
    expect(dest.dropped).toBe(1);
  });
});
