// The event-loop watchdog: delay measured by perf_hooks.monitorEventLoopDelay, shown in /healthz (since the last
// log line) and logged every EVENT_LOOP_LOG_INTERVAL, so a stall is visible to operators and to the attack tests.
// A second histogram is read every WINDOW_MS into a ring of the last minute, so a caller can ask for the worst
// delay since a moment of its own (`/healthz?since=<epoch ms>`) without resetting anyone else's figures.
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

/** The worst delay in the windows that ended after a given moment (at most the last minute). */
export interface RecentDelay {
  /** The moment asked about (epoch ms). */
  since: number;
  /** Worst delay (ms) of the windows that ended after it, the current one included. */
  maxMs: number;
  /** The windows' length (ms): the figure covers up to this long before `since`. */
  windowMs: number;
}

/** Length of a recent-delay window (ms), and how many are kept (one minute). */
const WINDOW_MS = 250;
const WINDOWS = 240;

/** A running watchdog. */
export interface EventLoopWatchdog {
  /** The current window's figures. */
  read(): EventLoopDelay;
  /** The worst delay since `since` (epoch ms; at most a minute back). */
  recent(since: number): RecentDelay;
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

  // Ring of [window end (epoch ms), worst delay (ms)] pairs.
  const w = monitorEventLoopDelay({ resolution: 10 });
  w.enable();
  const ends = new Float64Array(WINDOWS);
  const maxima = new Float64Array(WINDOWS);
  let next = 0;
  const windows = setInterval(() => {
    ends[next] = Date.now();
    maxima[next] = w.count ? ms(w.max) : 0;
    next = (next + 1) % WINDOWS;
    w.reset();
  }, WINDOW_MS);
  windows.unref();
  const recent = (after: number): RecentDelay => {
    let worstSince = w.count ? ms(w.max) : 0;
    for (let i = 0; i < WINDOWS; i++) if (ends[i] > after) worstSince = Math.max(worstSince, maxima[i]);
    return { since: after, maxMs: worstSince, windowMs: WINDOW_MS };
  };
  return {
    read,
    recent,
    stop() {
      if (timer) clearInterval(timer);
      clearInterval(windows);
      h.disable();
      w.disable();
    },
  };
}
