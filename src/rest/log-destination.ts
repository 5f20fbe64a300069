// Where the server's log lines go: stdout, through a bounded buffer that never blocks. pino's default destination
// (sonic-boom on fd 1) flushes synchronously at exit, retrying while the pipe is full: with the process reading
// stdout stopped, SIGTERM ran the shutdown and then process.exit never returned (the watchdog SIGKILLed it). Here a
// line goes to process.stdout (asynchronous on a pipe: it queues in the stream) unless more than `highWaterMark`
// bytes are already queued; then it is dropped and counted (/healthz shows the count). Nothing waits at exit.
/** A pino destination that drops lines instead of blocking (see the file comment). */
export interface LogDestination {
  /** pino's destination interface: one serialised line. */
  write(line: string): void;
  /** Lines dropped so far (the reader was not keeping up, or stdout failed). */
  readonly dropped: number;
}

/** What the destination needs of its stream (process.stdout). */
export interface LogStream {
  /** Bytes written but not yet taken by the reader. */
  readonly writableLength: number;
  write(chunk: string): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/** Bytes of log lines that may wait in stdout's buffer for a slow reader before lines are dropped. */
export const LOG_HIGH_WATER_MARK = 1024 * 1024;

/** A LogDestination over `stream` (process.stdout): lines are dropped while more than `highWaterMark` bytes wait
 * in it, and for good once it has failed (EPIPE: the reader went away). */
export function boundedLogDestination(
  stream: LogStream,
  highWaterMark = LOG_HIGH_WATER_MARK,
): LogDestination {
  let dropped = 0;
  // Dropped since the last line that got through: reported by a line of its own when writing resumes.
  let unreported = 0;
  let failed = false;
  // A write error (EPIPE, ...) would otherwise be an uncaught 'error' event: the process would crash for its logs.
  stream.on('error', () => {
    failed = true;
  });
  return {
    write(line) {
      if (failed || stream.writableLength > highWaterMark) {
        dropped++;
        unreported++;
        return;
      }
      if (unreported > 0) {
        // pino's shape (level 40 = warn), so log tooling reads it like the other lines.
        const note = {
          level: 40,
          time: Date.now(),
          msg: 'log lines dropped: stdout was not read',
          dropped: unreported,
        };
        unreported = 0;
        stream.write(JSON.stringify(note) + '\n');
      }
      stream.write(line);
    },
    get dropped() {
      return dropped;
    },
  };
}
