// The event-loop watchdog: delay measured by perf_hooks.monitorEventLoopDelay, shown in /healthz (since the last
// log line) and logged every EVENT_LOOP_LOG_INTERVAL, so a stall is visible to operators and to the attack tests.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from 'pino';

/** Event-loop delay figures in milliseconds. */
export interface EventLoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Since the process started: the worst delay seen. */
  worstMs: number;
  /** Start of the window p50/p99/max cover. */
  since: string;
}

/** A running watchdog. */
export interface EventLoopWatchdog {
  /** The current window's figures. */
  read(): EventLoopDelay;
  stop(): void;
}

const ms = (ns: number) => Math.round(ns / 1e4) / 100;

/** Starts measuring; logs and starts a new window every `logIntervalMs` (0: never logged, one window). */
export function startEventLoopWatchdog(logger: Logger, logIntervalMs: number): EventLoopWatchdog {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  let since = new Date();
  let worst = 0;
  const read = (): EventLoopDelay => {
    const max = h.count ? ms(h.max) : 0;
    worst = Math.max(worst, max);
    return {
      p50Ms: h.count ? ms(h.percentile(50)) : 0,
      p99Ms: h.count ? ms(h.percentile(99)) : 0,
      maxMs: max,
      worstMs: worst,
      since: since.toISOString(),
    };
  };
  const timer =
    logIntervalMs > 0
      ? setInterval(() => {
          const d = read();
          (d.maxMs >= 500 ? logger.warn : logger.info).call(logger, { eventLoop: d }, 'event-loop delay');
          h.reset();
          since = new Date();
        }, logIntervalMs)
      : undefined;
  timer?.unref();
  return {
    read,
    stop() {
      if (timer) clearInterval(timer);
      h.disable();
    },
  };
}
