// One running execution as the host tracks it: its deadline, logs, host calls and timers, and what ending it
// releases.
import type { LogBuffer } from './log-buffer.js';
import type { HostFunction } from './types.js';

/** A host timer (setTimeout inside the isolate) waiting on the host. */
export interface Sleep {
  timer?: NodeJS.Timeout;
  resolve: (fired: boolean) => void;
}

/** The state of one execution (the isolate refers to it by id only). */
export interface ExecState {
  id: number;
  medplum: Record<string, HostFunction>;
  logs: LogBuffer;
  deadline: number;
  done: boolean;
  timedOut: boolean;
  sleeps: Set<Sleep>;
  /** Aborts the execution's fetches when it ends; made by the first fetch (aborting one costs a DOMException). */
  abort?: AbortController;
  hostCalls: number;
  running: number;
  queue: (() => void)[];
  /** Settles the execution at once; used when the isolate dies in a way that leaves calls into it unsettled. */
  abandon?: (reason: 'memory' | 'catastrophic', message: string) => void;
}

/** A new execution's state. */
export function newExecution(
  id: number,
  medplum: Record<string, HostFunction>,
  logs: LogBuffer,
  deadline: number,
): ExecState {
  return {
    id,
    medplum,
    logs,
    deadline,
    done: false,
    timedOut: false,
    sleeps: new Set(),
    hostCalls: 0,
    running: 0,
    queue: [],
  };
}

/** Ends an execution on the host: its fetches are aborted, its timers never fire, queued host calls are refused.
 * Returns whether it left nothing behind that could still run in its context (a pending host call or timer):
 * only then may the context serve another execution. */
export function endExecution(exec: ExecState): boolean {
  const clean = exec.running === 0 && exec.queue.length === 0 && exec.sleeps.size === 0;
  exec.done = true;
  exec.abort?.abort();
  for (const s of exec.sleeps) {
    clearTimeout(s.timer);
    s.resolve(false);
  }
  exec.sleeps.clear();
  for (const wake of exec.queue.splice(0)) wake();
  return clean;
}
