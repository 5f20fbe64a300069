// Bot execution engine on isolated-vm. See README.md beside this file for the full contract.
//
// API
//   const sandbox = new BotSandbox({ preludes: [await hl7IsolateSource()], fetch: { allowPrivate: false } });
//   const code = await BotSandbox.compile(source, 'bot.ts');          // throws CompileError('bot.ts:3:7: ...')
//   const result = await sandbox.execute({ projectId, botId, codeVersion, compiledCode: code, timeoutMs, memoryMb,
//                                          event, medplum: { readResource: async (type, id) => ... } });
//   sandbox.dispose();
//
// Bot code: `export async function handler(medplum, event)` (ESM, compiled to CJS) or `exports.handler = ...`.
// The value it returns becomes ExecutionResult.value:
//   undefined -> { kind: 'undefined' }            string -> { kind: 'string', text }
//   Hl7Message (from the preludes) -> { kind: 'hl7', text }
//   new BotResponse({ status, headers, contentType, body }) -> { kind: 'response', ... }   (global BotResponse,
//       also `require('@medplum/core').BotResponse`): the way a bot sets HTTP status, content type and headers.
//   anything else -> { kind: 'json', json } (JSON.stringify semantics).
//
// Isolation design
// - One isolate per (projectId, botId), rebuilt when codeVersion or memoryMb changes; never shared between bots or
//   projects, so globals, prototypes and secrets of one bot cannot be seen by another. LRU-capped (maxIsolates)
//   and evicted when idle (idleTimeoutMs).
// - By default warm contexts are reused across executions of that bot, one execution at a time per context
//   (fresh context costs ~0.35 ms of CPU per execution; measured in test/bots/sandbox/sandbox.unit.test.ts), so an execution can
//   never reach another live execution's medplum client through globalThis. The bot MODULE is re-evaluated for every execution, so
//   module-level variables are per execution; only deliberate writes to globalThis/prototypes can persist between
//   executions of the SAME bot (like a warm Lambda: no guarantee either way). `contextPerExecution: true` gives
//   every execution a brand-new context instead.
// - Data crosses the boundary only as strings/numbers (JSON); no host object or function reference is ever
//   placed where bot code can reach it. Host capabilities are per-isolate callbacks that take an execution id and
//   are checked against that isolate's live executions.
// - Limits: wall-clock deadline enforced by a host timer that disposes the isolate (covers sync loops, microtask
//   loops, never-settling promises, timer chains); isolated-vm's own `timeout` additionally stops sync code;
//   memoryLimit per isolate (OOM disposes it -> 'memory'); result size checked inside the isolate before copy-out
//   and on the host -> 'output-too-large'; logs capped at logLimitBytes.
// - Only async isolated-vm APIs are used on the request path, so the Node event loop keeps running while bots spin.
//
// Files: types.ts (shapes, defaults), isolate-pool.ts (isolates per bot, LRU, idle sweep), isolate-entry.ts (one
// isolate: scripts, contexts), host-bridge.ts (console, medplum, fetch, timers; their budgets per execution),
// host-budget.ts (host calls per project: in flight, writes per second), execution.ts (an execution's
// state), budget.ts (shares of executions and memory), results.ts (decoding and classifying), log-buffer.ts.
import { performance } from 'node:perf_hooks';
import { BudgetTracker } from './budget.js';
import { compileBot } from './compile.js';
import { endExecution, hostUsage, newExecution } from './execution.js';
import { HostBudgets } from './host-budget.js';
import type { ContextHandle } from './isolate-entry.js';
import { IsolatePool } from './isolate-pool.js';
import { LogBuffer } from './log-buffer.js';
import { classify, decode, memoryError, timeoutError } from './results.js';
import {
  JsonText,
  resolveOptions,
  type BotEvent,
  type BotValue,
  type ExecuteRequest,
  type ExecutionErrorKind,
  type ExecutionResult,
  type ResolvedOptions,
  type SandboxOptions,
} from './types.js';

/** How long after the deadline an execution is answered even if the isolate never settles. */
const HARD_STOP_GRACE_MS = 1000;

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Number.isFinite(n) ? n : lo));
}

/** Runs bot code in isolates: one sandbox per server instance. */
export class BotSandbox {
  private readonly opts: ResolvedOptions;
  private readonly budget: BudgetTracker;
  private readonly pool: IsolatePool;
  private readonly hostBudgets: HostBudgets;
  private nextId = 1;
  private disposed = false;

  constructor(opts: SandboxOptions = {}) {
    this.opts = resolveOptions(opts);
    this.budget = new BudgetTracker(this.opts.budget);
    this.pool = new IsolatePool(this.opts, this.budget);
    this.hostBudgets = new HostBudgets({
      projectMaxInFlight: this.opts.projectMaxHostCalls,
      projectWritesPerSecond: this.opts.projectWritesPerSecond,
    });
  }

  /** Compiles bot source (JS/TS, ESM or CJS) to CommonJS. Throws CompileError naming `file:line:column`. */
  static compile(source: string, filename?: string): Promise<string> {
    return compileBot(source, filename);
  }

  /** Number of live isolates, running executions and reserved isolate memory (for metrics and tests). */
  stats(): { isolates: number; executions: number; reservedMb: number } {
    return { isolates: this.pool.size, executions: this.budget.running, reservedMb: this.budget.reservedMb };
  }

  /** Executions running now: for one project, or (no argument) for all. */
  running(projectId?: string): number {
    return projectId === undefined ? this.budget.running : this.budget.runningIn(projectId);
  }

  /** Runs one execution: admitted by the budget, in its bot's isolate, answered by the deadline at the latest. */
  async execute(req: ExecuteRequest): Promise<ExecutionResult> {
    const started = performance.now();
    const timeoutMs = clamp(req.timeoutMs, 1, this.opts.maxTimeoutMs);
    const memoryMb = Math.round(clamp(req.memoryMb, 8, Math.max(8, this.opts.maxMemoryMb)));
    const logs = new LogBuffer(this.opts.logLimitBytes);
    const result = (
      r:
        | { ok: true; value: BotValue }
        | { ok: false; error: ExecutionErrorKind; message: string; scope?: 'project' | 'server' },
    ): ExecutionResult => ({ ...r, logs: logs.toString(), durationMs: performance.now() - started });

    if (this.disposed)
      return result({ ok: false, error: 'error', message: 'The bot sandbox has been shut down' });
    let payload: string;
    try {
      payload = eventPayload(req.event, Object.keys(req.medplum ?? {}));
    } catch {
      return result({ ok: false, error: 'error', message: 'The bot event is not JSON-serializable' });
    }

    const refused = this.budget.admit(
      req.projectId,
      memoryMb,
      () => this.pool.warm(req, memoryMb) !== undefined,
      (which, enough) => this.pool.evictIdle(which, enough),
    );
    if (refused) return result(refused);
    const entry = this.pool.acquire(req, memoryMb);
    this.budget.begin(req.projectId);
    const exec = newExecution(
      this.nextId++,
      req.medplum ?? {},
      logs,
      started + timeoutMs,
      this.hostBudgets.of(req.projectId),
    );
    entry.executions.set(exec.id, exec);
    // Only now, with the execution registered, may the LRU cap dispose idle isolates (never this one).
    if (this.pool.size > this.opts.maxIsolates) this.pool.evict();
    const timer = setTimeout(() => {
      // An isolate that disposed itself (out of memory) before the deadline is a memory failure, not a timeout.
      if (entry.isolate.isDisposed && !entry.dead) {
        entry.kill('memory');
        return;
      }
      exec.timedOut = true;
      entry.kill('timeout');
    }, timeoutMs);
    // Last resort: isolated-vm has been seen (rarely, under CPU pressure) to leave a call into an isolate that ran
    // out of memory unsettled even after dispose. The caller gets its answer shortly after the deadline regardless.
    let hardTimer: NodeJS.Timeout | undefined;
    const hardStop = new Promise<ExecutionResult>((resolve) => {
      exec.abandon = (reason, message) =>
        resolve(
          result(
            reason === 'memory'
              ? memoryError(memoryMb)
              : { ok: false, error: 'error', message: `The bot's isolate failed: ${message}` },
          ),
        );
      hardTimer = setTimeout(() => {
        entry.kill(entry.dead ?? 'timeout');
        resolve(result(entry.dead === 'memory' ? memoryError(memoryMb) : timeoutError(timeoutMs)));
      }, timeoutMs + HARD_STOP_GRACE_MS);
    });

    let context: ContextHandle | undefined;
    const work = async (): Promise<ExecutionResult> => {
      try {
        context = await entry.acquireContext();
        const remaining = Math.ceil(exec.deadline - performance.now());
        if (remaining <= 0) throw new Error('Script execution timed out.');
        const out = await context.run.apply(undefined, [exec.id, payload], {
          arguments: { copy: true },
          result: { promise: true, copy: true },
          timeout: remaining,
        });
        if (exec.timedOut) return result(timeoutError(timeoutMs));
        return result(decode(out, this.opts.maxOutputBytes));
      } catch (err) {
        return result(classify(err, exec, entry, timeoutMs, memoryMb));
      }
    };
    try {
      const out = await Promise.race([work(), hardStop]);
      return { ...out, host: hostUsage(exec) };
    } finally {
      clearTimeout(hardTimer);
      clearTimeout(timer);
      // Bot code still waiting on the host could run during the context's next execution: such a context is not
      // reused.
      const clean = endExecution(exec);
      entry.executions.delete(exec.id);
      entry.lastUsed = performance.now();
      this.budget.end(req.projectId);
      const released = context ? entry.releaseContext(context, clean) : false;
      if (entry.dead && entry.executions.size === 0) entry.kill(entry.dead);
      else if (this.pool.size > this.opts.maxIsolates) this.pool.evict();
      if (released && ++entry.sinceHeapCheck >= 10) this.pool.checkHeap(entry);
    }
  }

  /** Disposes every isolate. Further executions fail with an error result. */
  dispose(): void {
    this.disposed = true;
    this.pool.dispose();
  }
}

/** The execution's payload, `{"event":...,"methods":[...]}`: an input given as JsonText is spliced in as its text
 * (checked JSON: the isolate parses it to the same value). */
function eventPayload(event: BotEvent, methods: string[]): string {
  if (!(event.input instanceof JsonText)) return JSON.stringify({ event, methods });
  const { input, ...rest } = event;
  const head = JSON.stringify(rest);
  const sep = head === '{}' ? '' : ',';
  return `{"event":${head.slice(0, -1)}${sep}"input":${input.text}},"methods":${JSON.stringify(methods)}}`;
}
