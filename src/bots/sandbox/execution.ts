// One running execution as the host tracks it: its deadline, logs, host calls and timers, and what ending it
// releases.
import type { ProjectHostBudget } from './host-budget.js';
import type { LogBuffer } from './log-buffer.js';
import type { HostFunction, HostUsage } from './types.js';

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
  /** Characters of JSON its host calls moved (arguments as they arrive, results as they leave). */
  hostBytes: number;
  /** The first refusal of a host call by a budget. */
  refused?: string;
  /** Its project's host-call budget (shared by all the project's executions). */
  project: ProjectHostBudget;
  running: number;
  queue: (() => void)[];
  /** Large host calls run one at a time per execution: the one running, then those waiting. */
  largeBusy: boolean;
  largeQueue: (() => void)[];
  /** Settles the execution at once; used when the isolate dies in a way that leaves calls into it unsettled. */
  abandon?: (reason: 'memory' | 'catastrophic', message: string) => void;
}

/** A new execution's state. */
export function newExecution(
  id: number,
  medplum: Record<string, HostFunction>,
  logs: LogBuffer,
  deadline: number,
  project: ProjectHostBudget,
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
    hostBytes: 0,
    project,
    running: 0,
    queue: [],
    largeBusy: false,
    largeQueue: [],
  };
}

/** What the execution's host calls cost. */
export function hostUsage(exec: ExecState): HostUsage {
  return {
    calls: exec.hostCalls,
    bytes: exec.hostBytes,
    ...(exec.refused !== undefined ? { refused: exec.refused } : {}),
  };
}

/** Ends an execution on the host: its fetches are aborted, its timers never fire, queued host calls are refused.
 * Returns whether it left nothing behind that could still run in its context (a pending host call or timer):
 * only then may the context serve another execution. */
export function endExecution(exec: ExecState): boolean {
  const clean =
    exec.running === 0 && exec.queue.length === 0 && exec.largeQueue.length === 0 && exec.sleeps.size === 0;
  exec.done = true;
  exec.abort?.abort();
  for (const s of exec.sleeps) {
    clearTimeout(s.timer);
    s.resolve(false);
  }
  exec.sleeps.clear();
  for (const wake of exec.queue.splice(0)) wake();
  for (const wake of exec.largeQueue.splice(0)) wake();
  return clean;
}
