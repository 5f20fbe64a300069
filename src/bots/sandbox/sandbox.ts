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
//   (fresh context costs ~0.35 ms of CPU per execution; measured in test/sandbox.test.ts), so an execution can
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
import ivm from './isolated-vm.js';
import { performance } from 'node:perf_hooks';
import { compileBot } from './compile.js';
import { policyFetch, type BridgedFetchRequest, type FetchPolicy } from './fetch-policy.js';
import { RUNTIME_SOURCE, wrapModule } from './runtime-source.js';

export { CompileError } from './compile.js';
export type { FetchPolicy } from './fetch-policy.js';

export const HL7_CONTENT_TYPE = 'x-application/hl7-v2+er7';

export interface SandboxOptions {
  /** Maximum warm isolates kept (LRU). Busy isolates are never evicted, so this is a soft cap. Default 32. */
  maxIsolates?: number;
  /** Idle isolates are disposed after this long. Default 300000 (5 min). */
  idleTimeoutMs?: number;
  /** Upper bound for a request's timeoutMs. Default 900000 (15 min). */
  maxTimeoutMs?: number;
  /** Upper bound for a request's memoryMb (lower bound is always 8). Default 1024. */
  maxMemoryMb?: number;
  /** Log capture limit per execution in bytes (UTF-8). Default 65536. */
  logLimitBytes?: number;
  /** Maximum size of the returned value (serialized, UTF-8 bytes). Default 10 MiB. */
  maxOutputBytes?: number;
  /** Outbound fetch policy. */
  fetch?: FetchPolicy;
  /** Trusted scripts run in every context before bot code (e.g. the HL7 library defining globalThis.Hl7Message). */
  preludes?: string[];
  /** Give every execution a new V8 context (no state at all between executions). Default false. */
  contextPerExecution?: boolean;
  /** Max medplum bridge calls + fetches per execution. Default 1000. */
  maxHostCallsPerExecution?: number;
  /** Max concurrently running medplum bridge calls + fetches per execution (more wait in a queue). Default 16. */
  maxConcurrentHostCalls?: number;
  /** Max pending setTimeout/setInterval timers per execution. Default 1000. */
  maxTimers?: number;
  /** Server-wide share of executions and isolate memory (see ExecutionBudget). Default: unlimited. */
  budget?: Partial<ExecutionBudget>;
}

/**
 * Limits shared by all bots of one sandbox. Memory is counted as the `memoryMb` each live isolate may grow to (its
 * heap limit), from its creation until it is disposed, warm or busy. Over a limit an execution is refused at once
 * (ExecutionResult error 'busy'); idle warm isolates are disposed first to make room.
 */
export interface ExecutionBudget {
  /** Executions running at once, all projects. */
  maxConcurrent: number;
  /** Executions running at once in one project. */
  projectMaxConcurrent: number;
  /** MB of isolate heap limits, all projects. */
  memoryMb: number;
  /** MB of isolate heap limits of one project. */
  projectMemoryMb: number;
}

export type HostFunction = (...args: unknown[]) => Promise<unknown>;

export interface BotEvent {
  bot: unknown;
  contentType: string;
  /** JSON-able input; for HL7 (contentType x-application/hl7-v2+er7) pass { hl7: string }: re-parsed inside. */
  input: unknown;
  secrets: Record<string, unknown>;
  traceId: string;
  requester: unknown;
  headers: Record<string, string>;
  /** Async jobs: the run number (1 first; more when re-run after the instance running it died). */
  attempt?: number;
}

export interface ExecuteRequest {
  projectId: string;
  botId: string;
  /** Cache key of the code: the warm isolate is reused while projectId, botId, codeVersion and memoryMb match. */
  codeVersion: string;
  /** Output of BotSandbox.compile (CommonJS). */
  compiledCode: string;
  timeoutMs: number;
  memoryMb: number;
  event: BotEvent;
  /** Host functions exposed as methods of the bot's `medplum` client. JSON in, JSON out. */
  medplum: Record<string, HostFunction>;
  /** Name used in bot stack traces. Default `bot.js`. */
  filename?: string;
}

export type ResponseBody =
  { type: 'empty' } | { type: 'text'; text: string } | { type: 'json'; json: unknown };

export type BotValue =
  | { kind: 'undefined' }
  | { kind: 'string'; text: string }
  | { kind: 'json'; json: unknown }
  | { kind: 'hl7'; text: string }
  | {
      kind: 'response';
      status: number;
      contentType?: string;
      headers: Record<string, string>;
      body: ResponseBody;
    };

/** Warm contexts kept per isolate for concurrent executions of one bot (more are released after use). As many as
 * one project may run at once (BOT_PROJECT_MAX_CONCURRENT's default): with 4, a bot under 16 concurrent callers
 * built and dropped a context for most executions (bench: ~1,100/s, p50 ~9 ms instead of ~3,000/s). Contexts live
 * in the bot's own isolate, so they count against its memoryLimit, not the server's. */
const MAX_IDLE_CONTEXTS = 16;

/** How long after the deadline an execution is answered even if the isolate never settles. */
const HARD_STOP_GRACE_MS = 1000;

export type ExecutionErrorKind = 'error' | 'timeout' | 'memory' | 'output-too-large' | 'busy';

export type ExecutionResult =
  | { ok: true; value: BotValue; logs: string; durationMs: number }
  | {
      ok: false;
      error: ExecutionErrorKind;
      message: string;
      logs: string;
      durationMs: number;
      /** For 'busy': whose share is spent (the project's, or the whole server's). */
      scope?: 'project' | 'server';
    };

/** A refusal because a share of the budget is spent. */
type BusyError = { ok: false; error: 'busy'; message: string; scope: 'project' | 'server' };

/** Response headers a bot may not set (hop-by-hop, framing, cookies on the server origin, CORS). */
const FORBIDDEN_RESPONSE_HEADERS =
  /^(connection|keep-alive|transfer-encoding|content-length|upgrade|te|trailer|proxy-.*|set-cookie|set-cookie2|access-control-.*|strict-transport-security)$/i;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[^\r\n\0]*$/;

class LogBuffer {
  private parts: string[] = [];
  private bytes = 0;
  truncated = false;
  constructor(private readonly limit: number) {}
  append(line: string, truncatedInIsolate: boolean): void {
    if (this.truncated) return;
    const text = `${line}\n`;
    const size = Buffer.byteLength(text);
    if (this.bytes + size > this.limit) {
      const room = this.limit - this.bytes;
      if (room > 0)
        this.parts.push(
          Buffer.from(text)
            .subarray(0, room)
            .toString('utf8')
            .replace(/\uFFFD$/, ''),
        );
      this.bytes = this.limit;
      this.truncated = true;
      return;
    }
    this.parts.push(text);
    this.bytes += size;
    if (truncatedInIsolate) this.truncated = true;
  }
  toString(): string {
    const text = this.parts.join('');
    return this.truncated ? `${text}\n[logs truncated: limit of ${this.limit} bytes reached]\n` : text;
  }
}

interface ExecState {
  id: number;
  entry: IsolateEntry;
  medplum: Record<string, HostFunction>;
  logs: LogBuffer;
  deadline: number;
  done: boolean;
  timedOut: boolean;
  sleeps: Set<{ timer?: NodeJS.Timeout; resolve: (fired: boolean) => void }>;
  /** Aborts the execution's fetches when it ends; made by the first fetch (aborting one costs a DOMException). */
  abort?: AbortController;
  hostCalls: number;
  running: number;
  queue: (() => void)[];
  /** Settles the execution at once; used when the isolate dies in a way that leaves calls into it unsettled. */
  abandon?: (reason: 'memory' | 'catastrophic', message: string) => void;
}

interface ContextHandle {
  context: ivm.Context;
  run: ivm.Reference<(id: number, payload: string) => Promise<string>>;
}

type DeathReason =
  'timeout' | 'memory' | 'catastrophic' | 'evicted' | 'replaced' | 'disposed' | 'setup' | 'recycled';

type ResolvedOptions = Required<Omit<SandboxOptions, 'fetch' | 'budget'>> & {
  fetch: Required<FetchPolicy>;
  budget: ExecutionBudget;
};

class IsolateEntry {
  readonly isolate: ivm.Isolate;
  readonly executions = new Map<number, ExecState>();
  lastUsed = performance.now();
  dead: DeathReason | undefined;
  /** Executions since the last heap check (contextPerExecution mode). */
  sinceHeapCheck = 0;
  private scripts: Promise<{ preludes: ivm.Script[]; runtime: ivm.Script; user: ivm.Script }> | undefined;
  /** Warm contexts not in use. A context serves one execution at a time, so an execution can never reach another
   * execution's `medplum`, console or timers through globalThis (issue 12 item 7). */
  private readonly idle: ContextHandle[] = [];
  private readonly hostLog: ivm.Callback;
  private readonly hostCall: ivm.Reference;
  private readonly hostFetch: ivm.Reference;
  private readonly hostSleep: ivm.Reference;

  constructor(
    private readonly sandbox: BotSandbox,
    private readonly opts: ResolvedOptions,
    readonly projectId: string,
    readonly codeVersion: string,
    readonly memoryMb: number,
    private readonly compiledCode: string,
    private readonly filename: string,
  ) {
    this.isolate = new ivm.Isolate({
      memoryLimit: memoryMb,
      // V8 gave up on the isolate (seen on out-of-memory in string-heavy code): the call running in it may never
      // settle, so its executions are answered now rather than at the deadline.
      onCatastrophicError: (message: string) => {
        const reason = /memory/i.test(message) ? 'memory' : 'catastrophic';
        this.kill(reason);
        for (const exec of this.executions.values()) exec.abandon?.(reason, message);
      },
    });
    sandbox.reserve(this);
    this.hostLog = new ivm.Callback(
      (id: unknown, line: unknown, truncated: unknown) => {
        const exec = this.live(id);
        if (exec && typeof line === 'string') exec.logs.append(line, truncated === true);
      },
      { ignored: true },
    );
    this.hostCall = new ivm.Reference((id: unknown, name: unknown, argsJson: unknown) =>
      this.onHostCall(id, name, argsJson),
    );
    this.hostFetch = new ivm.Reference((id: unknown, reqJson: unknown) => this.onFetch(id, reqJson));
    this.hostSleep = new ivm.Reference((id: unknown, ms: unknown) => this.onSleep(id, ms));
  }

  private live(id: unknown): ExecState | undefined {
    const exec = typeof id === 'number' ? this.executions.get(id) : undefined;
    return exec && !exec.done ? exec : undefined;
  }

  /** Runs fn under the execution's host-call budget and concurrency limit. */
  private async budgeted(exec: ExecState, fn: () => Promise<string>): Promise<string> {
    if (++exec.hostCalls > this.opts.maxHostCallsPerExecution) {
      return fail(
        `Too many medplum/fetch calls in one execution (limit ${this.opts.maxHostCallsPerExecution})`,
      );
    }
    if (exec.running >= this.opts.maxConcurrentHostCalls) {
      await new Promise<void>((resolve) => exec.queue.push(resolve));
    }
    if (exec.done) return fail('The bot execution has finished');
    exec.running++;
    try {
      return await fn();
    } finally {
      exec.running--;
      exec.queue.shift()?.();
    }
  }

  private async onHostCall(id: unknown, name: unknown, argsJson: unknown): Promise<string> {
    const exec = this.live(id);
    if (!exec) return fail('The bot execution has finished');
    if (typeof name !== 'string' || !Object.hasOwn(exec.medplum, name) || typeof argsJson !== 'string') {
      return fail(`medplum.${String(name)} is not available`);
    }
    return this.budgeted(exec, async () => {
      try {
        const args: unknown = JSON.parse(argsJson);
        const value = await exec.medplum[name](...(Array.isArray(args) ? args : []));
        if (exec.done) return fail('The bot execution has finished');
        const json = value === undefined ? undefined : JSON.stringify(value);
        return json === undefined ? '{"ok":true}' : `{"ok":true,"value":${json}}`;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const outcome = (err as { outcome?: unknown } | null)?.outcome;
        let outcomeJson: string | undefined;
        try {
          outcomeJson = outcome && typeof outcome === 'object' ? JSON.stringify(outcome) : undefined;
        } catch {
          outcomeJson = undefined;
        }
        return outcomeJson
          ? `{"ok":false,"message":${JSON.stringify(message)},"outcome":${outcomeJson}}`
          : fail(message);
      }
    });
  }

  private async onFetch(id: unknown, reqJson: unknown): Promise<string> {
    const exec = this.live(id);
    if (!exec) return fail('The bot execution has finished');
    if (typeof reqJson !== 'string') return fail('fetch: invalid request');
    return this.budgeted(exec, async () => {
      try {
        const parsed = JSON.parse(reqJson) as Partial<BridgedFetchRequest>;
        const req: BridgedFetchRequest = {
          url: String(parsed.url),
          method: typeof parsed.method === 'string' && /^[A-Z]+$/.test(parsed.method) ? parsed.method : 'GET',
          headers: Array.isArray(parsed.headers)
            ? parsed.headers
                .filter(
                  (h) =>
                    Array.isArray(h) && HEADER_NAME.test(String(h[0])) && HEADER_VALUE.test(String(h[1])),
                )
                .map((h) => [String(h[0]), String(h[1])] as [string, string])
            : [],
          body: typeof parsed.body === 'string' ? parsed.body : undefined,
          redirect: parsed.redirect === 'manual' || parsed.redirect === 'error' ? parsed.redirect : 'follow',
        };
        const remaining = exec.deadline - performance.now();
        const signal = AbortSignal.any([
          (exec.abort ??= new AbortController()).signal,
          AbortSignal.timeout(Math.max(1, Math.ceil(remaining))),
        ]);
        const response = await policyFetch(req, this.opts.fetch, signal);
        return JSON.stringify({ ok: true, response });
      } catch (err) {
        return fail(err instanceof Error && err.name === 'FetchRefusedError' ? err.message : 'fetch failed');
      }
    });
  }

  private onSleep(id: unknown, ms: unknown): Promise<boolean> {
    const exec = this.live(id);
    if (!exec) return Promise.resolve(false);
    const delay = typeof ms === 'number' && ms > 0 ? ms : 0;
    return new Promise<boolean>((resolve) => {
      const sleep: { timer?: NodeJS.Timeout; resolve: (fired: boolean) => void } = { resolve };
      // A timer that would fire after the deadline never fires: the deadline ends the execution first.
      if (performance.now() + delay < exec.deadline) {
        sleep.timer = setTimeout(() => {
          exec.sleeps.delete(sleep);
          resolve(!exec.done);
        }, delay);
      }
      exec.sleeps.add(sleep);
    });
  }

  private compileScripts(): Promise<{ preludes: ivm.Script[]; runtime: ivm.Script; user: ivm.Script }> {
    this.scripts ??= (async () => {
      const preludes: ivm.Script[] = [];
      for (const [i, source] of this.opts.preludes.entries()) {
        preludes.push(await this.sandbox.compileCached(this.isolate, source, `prelude-${i}.js`));
      }
      const runtime = await this.sandbox.compileCached(this.isolate, RUNTIME_SOURCE, 'bot-runtime.js');
      const user = await this.isolate.compileScript(wrapModule(this.compiledCode), {
        filename: this.filename,
      });
      return { preludes, runtime, user };
    })();
    return this.scripts;
  }

  private async createContext(): Promise<ContextHandle> {
    const scripts = await this.compileScripts();
    const context = await this.isolate.createContext();
    try {
      for (const prelude of scripts.preludes) await prelude.run(context, { timeout: 10_000 });
      const init = await scripts.runtime.run(context, { reference: true, timeout: 10_000 });
      const factory = await scripts.user.run(context, { reference: true, timeout: 10_000 });
      if (factory.typeof !== 'function') throw new Error('compiled bot code is not a CommonJS module');
      const config = JSON.stringify({
        logLimit: this.opts.logLimitBytes,
        maxOutputChars: this.opts.maxOutputBytes,
        maxArgChars: Math.max(this.opts.maxOutputBytes, this.opts.fetch.maxRequestBytes),
        maxTimers: this.opts.maxTimers,
        hl7ContentType: HL7_CONTENT_TYPE,
      });
      const run = (await init.apply(
        undefined,
        [this.hostLog, this.hostCall, this.hostFetch, this.hostSleep, factory.derefInto(), config],
        { result: { reference: true }, timeout: 10_000 },
      )) as ContextHandle['run'];
      init.release();
      factory.release();
      return { context, run };
    } catch (err) {
      context.release();
      throw err;
    }
  }

  /** A context used by no other execution: an idle warm one, or a new one. Give it back with releaseContext. */
  async acquireContext(): Promise<ContextHandle> {
    if (!this.opts.contextPerExecution) {
      const warm = this.idle.pop();
      if (warm) return warm;
    }
    return this.createContext();
  }

  /**
   * Returns a context after its execution. It is kept warm only when reuse is on, the execution left nothing
   * behind that could still run in it (a pending host call or timer), and few are idle; otherwise it is released.
   * Returns true when a context was released (dead contexts fill the heap until V8 collects them).
   */
  releaseContext(handle: ContextHandle, clean: boolean): boolean {
    if (this.isolate.isDisposed) return false;
    if (clean && !this.opts.contextPerExecution && this.idle.length < MAX_IDLE_CONTEXTS) {
      this.idle.push(handle);
      return false;
    }
    handle.run.release();
    handle.context.release();
    return true;
  }

  /** Disposes the isolate now (ends all its executions). */
  kill(reason: DeathReason): void {
    if (!this.dead) this.dead = reason;
    this.sandbox.forget(this);
    this.sandbox.unreserve(this);
    if (!this.isolate.isDisposed) {
      try {
        this.isolate.dispose();
      } catch {
        // already disposed
      }
    }
  }

  /** Disposes once idle (code version changed, evicted). */
  retire(reason: DeathReason): void {
    if (!this.dead) this.dead = reason;
    if (this.executions.size === 0) this.kill(reason);
  }
}

function busy(scope: 'project' | 'server', why: string): BusyError {
  return { ok: false, error: 'busy', scope, message: `Too many bot executions: ${why}; retry shortly` };
}

function fail(message: string): string {
  return JSON.stringify({ ok: false, message });
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Number.isFinite(n) ? n : lo));
}

export class BotSandbox {
  private readonly opts: ResolvedOptions;
  private readonly entries = new Map<string, IsolateEntry>();
  private readonly cachedData = new Map<string, ivm.ExternalCopy<ArrayBuffer>>();
  private readonly sweeper: NodeJS.Timeout;
  private nextId = 1;
  private disposed = false;
  /** Running executions, all projects and per project. */
  private running = 0;
  private readonly projectRunning = new Map<string, number>();
  /** Reserved isolate memory (MB), all projects and per project; an entry is counted from creation to kill. */
  private reservedMb = 0;
  private readonly projectReservedMb = new Map<string, number>();
  private readonly reserved = new WeakSet<IsolateEntry>();

  constructor(opts: SandboxOptions = {}) {
    this.opts = {
      maxIsolates: opts.maxIsolates ?? 32,
      idleTimeoutMs: opts.idleTimeoutMs ?? 300_000,
      maxTimeoutMs: opts.maxTimeoutMs ?? 900_000,
      maxMemoryMb: opts.maxMemoryMb ?? 1024,
      logLimitBytes: opts.logLimitBytes ?? 65_536,
      maxOutputBytes: opts.maxOutputBytes ?? 10 * 1024 * 1024,
      preludes: opts.preludes ?? [],
      contextPerExecution: opts.contextPerExecution ?? false,
      maxHostCallsPerExecution: opts.maxHostCallsPerExecution ?? 1000,
      maxConcurrentHostCalls: opts.maxConcurrentHostCalls ?? 16,
      maxTimers: opts.maxTimers ?? 1000,
      budget: {
        maxConcurrent: opts.budget?.maxConcurrent ?? Infinity,
        projectMaxConcurrent: opts.budget?.projectMaxConcurrent ?? Infinity,
        memoryMb: opts.budget?.memoryMb ?? Infinity,
        projectMemoryMb: opts.budget?.projectMemoryMb ?? Infinity,
      },
      fetch: {
        allowPrivate: opts.fetch?.allowPrivate ?? false,
        enabled: opts.fetch?.enabled ?? true,
        maxResponseBytes: opts.fetch?.maxResponseBytes ?? 10 * 1024 * 1024,
        maxRequestBytes: opts.fetch?.maxRequestBytes ?? 10 * 1024 * 1024,
        maxRedirects: opts.fetch?.maxRedirects ?? 5,
      },
    };
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.opts.idleTimeoutMs, 30_000));
    this.sweeper.unref();
  }

  /** Compiles bot source (JS/TS, ESM or CJS) to CommonJS. Throws CompileError naming `file:line:column`. */
  static compile(source: string, filename?: string): Promise<string> {
    return compileBot(source, filename);
  }

  /** Number of live isolates, running executions and reserved isolate memory (for metrics and tests). */
  stats(): { isolates: number; executions: number; reservedMb: number } {
    return { isolates: this.entries.size, executions: this.running, reservedMb: this.reservedMb };
  }

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
      payload = JSON.stringify({ event: req.event, methods: Object.keys(req.medplum ?? {}) });
    } catch {
      return result({ ok: false, error: 'error', message: 'The bot event is not JSON-serializable' });
    }

    const refused = this.admit(req, memoryMb);
    if (refused) return result(refused);
    const entry = this.acquire(req, memoryMb);
    this.running++;
    this.projectRunning.set(req.projectId, (this.projectRunning.get(req.projectId) ?? 0) + 1);
    const exec: ExecState = {
      id: this.nextId++,
      entry,
      medplum: req.medplum ?? {},
      logs,
      deadline: started + timeoutMs,
      done: false,
      timedOut: false,
      sleeps: new Set(),
      hostCalls: 0,
      running: 0,
      queue: [],
    };
    entry.executions.set(exec.id, exec);
    // Only now, with the execution registered, may the LRU cap dispose idle isolates (never this one).
    if (this.entries.size > this.opts.maxIsolates) this.evict();
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
              ? this.memoryError(memoryMb)
              : { ok: false, error: 'error', message: `The bot's isolate failed: ${message}` },
          ),
        );
      hardTimer = setTimeout(() => {
        entry.kill(entry.dead ?? 'timeout');
        resolve(result(entry.dead === 'memory' ? this.memoryError(memoryMb) : this.timeoutError(timeoutMs)));
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
        if (exec.timedOut) return result(this.timeoutError(timeoutMs));
        return result(this.decode(out));
      } catch (err) {
        return result(this.classify(err, exec, entry, timeoutMs, memoryMb));
      }
    };
    try {
      return await Promise.race([work(), hardStop]);
    } finally {
      clearTimeout(hardTimer);
      clearTimeout(timer);
      // Bot code still waiting on the host could run during the context's next execution: such a context is not
      // reused.
      const clean = exec.running === 0 && exec.queue.length === 0 && exec.sleeps.size === 0;
      exec.done = true;
      exec.abort?.abort();
      for (const s of exec.sleeps) {
        clearTimeout(s.timer);
        s.resolve(false);
      }
      exec.sleeps.clear();
      for (const wake of exec.queue.splice(0)) wake();
      entry.executions.delete(exec.id);
      entry.lastUsed = performance.now();
      this.running--;
      const left = (this.projectRunning.get(req.projectId) ?? 1) - 1;
      if (left > 0) this.projectRunning.set(req.projectId, left);
      else this.projectRunning.delete(req.projectId);
      const released = context ? entry.releaseContext(context, clean) : false;
      if (entry.dead && entry.executions.size === 0) entry.kill(entry.dead);
      else if (this.entries.size > this.opts.maxIsolates) this.evict();
      if (released && ++entry.sinceHeapCheck >= 10) this.checkHeap(entry);
    }
  }

  /** Disposes every isolate. Further executions fail with an error result. */
  dispose(): void {
    this.disposed = true;
    clearInterval(this.sweeper);
    for (const entry of [...this.entries.values()]) entry.kill('disposed');
    this.entries.clear();
  }

  /** @internal compile a trusted script with V8 code cache shared across isolates. */
  async compileCached(isolate: ivm.Isolate, source: string, filename: string): Promise<ivm.Script> {
    type WithCache = ivm.Script & {
      cachedDataRejected?: boolean;
      cachedData?: ivm.ExternalCopy<ArrayBuffer>;
    };
    const cached = this.cachedData.get(source);
    if (cached) {
      const script = (await isolate.compileScript(source, { filename, cachedData: cached })) as WithCache;
      if (script.cachedDataRejected !== true) return script;
    }
    const script = (await isolate.compileScript(source, { filename, produceCachedData: true })) as WithCache;
    if (script.cachedData) this.cachedData.set(source, script.cachedData);
    return script;
  }

  /** @internal an entry removes itself when it dies. */
  forget(entry: IsolateEntry): void {
    for (const [key, e] of this.entries) {
      if (e === entry) this.entries.delete(key);
    }
  }

  private acquire(req: ExecuteRequest, memoryMb: number): IsolateEntry {
    const key = JSON.stringify([req.projectId, req.botId]);
    let entry = this.entries.get(key);
    if (entry && (entry.dead || entry.codeVersion !== req.codeVersion || entry.memoryMb !== memoryMb)) {
      this.entries.delete(key);
      entry.retire('replaced');
      entry = undefined;
    }
    if (entry) {
      this.entries.delete(key); // LRU: move to the end
    } else {
      entry = new IsolateEntry(
        this,
        this.opts,
        req.projectId,
        req.codeVersion,
        memoryMb,
        req.compiledCode,
        req.filename ?? 'bot.js',
      );
    }
    this.entries.set(key, entry);
    return entry;
  }

  /** The warm entry an execution would reuse, if any. */
  private warmEntry(req: ExecuteRequest, memoryMb: number): IsolateEntry | undefined {
    const entry = this.entries.get(JSON.stringify([req.projectId, req.botId]));
    return entry && !entry.dead && entry.codeVersion === req.codeVersion && entry.memoryMb === memoryMb
      ? entry
      : undefined;
  }

  /**
   * Admission: the project's and the server's share of concurrent executions and of isolate memory. Idle warm
   * isolates (the project's own first) are disposed to make room for a new one. Returns the refusal, if any.
   */
  private admit(req: ExecuteRequest, memoryMb: number): BusyError | undefined {
    const b = this.opts.budget;
    const project = req.projectId;
    if ((this.projectRunning.get(project) ?? 0) >= b.projectMaxConcurrent)
      return busy('project', `this project already runs ${b.projectMaxConcurrent} bot executions at once`);
    if (this.running >= b.maxConcurrent)
      return busy('server', `the server already runs ${b.maxConcurrent} bot executions at once`);
    if (this.warmEntry(req, memoryMb)) return undefined;
    const projectFits = () => (this.projectReservedMb.get(project) ?? 0) + memoryMb <= b.projectMemoryMb;
    const serverFits = () => this.reservedMb + memoryMb <= b.memoryMb;
    if (!projectFits()) this.evictIdle((e) => e.projectId === project, projectFits);
    if (!projectFits())
      return busy(
        'project',
        `this project's bot isolates already hold ${this.projectReservedMb.get(project) ?? 0} of its ` +
          `${b.projectMemoryMb} MB (this bot needs ${memoryMb} MB)`,
      );
    if (!serverFits()) this.evictIdle(() => true, serverFits);
    if (!serverFits())
      return busy('server', `bot isolates already hold ${this.reservedMb} of the server's ${b.memoryMb} MB`);
    return undefined;
  }

  /** Disposes idle entries matching `which`, least recently used first, until `enough()`. */
  private evictIdle(which: (e: IsolateEntry) => boolean, enough: () => boolean): void {
    for (const [key, entry] of this.entries) {
      if (enough()) return;
      if (entry.executions.size === 0 && which(entry)) {
        this.entries.delete(key);
        entry.kill('evicted');
      }
    }
  }

  /** @internal counts a new isolate's memory limit against the budget. */
  reserve(entry: IsolateEntry): void {
    this.reserved.add(entry);
    this.reservedMb += entry.memoryMb;
    this.projectReservedMb.set(
      entry.projectId,
      (this.projectReservedMb.get(entry.projectId) ?? 0) + entry.memoryMb,
    );
  }

  /** @internal gives a disposed isolate's memory back (once). */
  unreserve(entry: IsolateEntry): void {
    if (!this.reserved.has(entry)) return;
    this.reserved.delete(entry);
    this.reservedMb -= entry.memoryMb;
    const left = (this.projectReservedMb.get(entry.projectId) ?? 0) - entry.memoryMb;
    if (left > 0) this.projectReservedMb.set(entry.projectId, left);
    else this.projectReservedMb.delete(entry.projectId);
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.opts.maxIsolates) return;
      if (entry.executions.size === 0) {
        this.entries.delete(key);
        entry.kill('evicted');
      }
    }
  }

  /**
   * V8 frees discarded contexts only after several major GCs, so with contextPerExecution the heap of a busy
   * isolate fills with dead contexts and would eventually hit the memory limit although no execution uses much.
   * Every 10 executions the heap is checked; past half the limit the isolate is retired (replaced on next use).
   */
  private checkHeap(entry: IsolateEntry): void {
    entry.sinceHeapCheck = 0;
    if (entry.dead) return;
    entry.isolate.getHeapStatistics().then(
      (h) => {
        if (
          !entry.dead &&
          h.used_heap_size + h.externally_allocated_size > (entry.memoryMb * 1024 * 1024) / 2
        ) {
          this.forget(entry);
          entry.retire('recycled');
        }
      },
      () => undefined,
    );
  }

  private sweep(): void {
    const cutoff = performance.now() - this.opts.idleTimeoutMs;
    for (const [key, entry] of this.entries) {
      if (entry.executions.size === 0 && entry.lastUsed < cutoff) {
        this.entries.delete(key);
        entry.kill('evicted');
      }
    }
  }

  private timeoutError(timeoutMs: number): { ok: false; error: 'timeout'; message: string } {
    return { ok: false, error: 'timeout', message: `Bot execution timed out after ${timeoutMs} ms` };
  }

  private memoryError(memoryMb: number): { ok: false; error: 'memory'; message: string } {
    return { ok: false, error: 'memory', message: `Bot exceeded its memory limit of ${memoryMb} MB` };
  }

  private classify(
    err: unknown,
    exec: ExecState,
    entry: IsolateEntry,
    timeoutMs: number,
    memoryMb: number,
  ): { ok: false; error: ExecutionErrorKind; message: string } {
    const message = err instanceof Error ? err.message : String(err);
    if (exec.timedOut || /timed out/i.test(message)) {
      entry.kill('timeout');
      return this.timeoutError(timeoutMs);
    }
    if (
      /memory limit/i.test(message) ||
      entry.dead === 'memory' ||
      (entry.isolate.isDisposed && !entry.dead)
    ) {
      entry.kill('memory');
      return this.memoryError(memoryMb);
    }
    if (entry.isolate.isDisposed) {
      return {
        ok: false,
        error: 'error',
        message: 'Bot execution aborted: another execution of this bot hit a limit and its isolate was reset',
      };
    }
    // Infrastructure failure inside the isolate (e.g. compiled code that does not parse): message only, no stack.
    entry.kill('setup');
    return { ok: false, error: 'error', message: `${err instanceof Error ? err.name : 'Error'}: ${message}` };
  }

  private decode(
    out: unknown,
  ): { ok: true; value: BotValue } | { ok: false; error: ExecutionErrorKind; message: string } {
    const max = this.opts.maxOutputBytes;
    const tooLarge = (size: number | string): { ok: false; error: 'output-too-large'; message: string } => ({
      ok: false,
      error: 'output-too-large',
      message: `Bot output is too large (${size} bytes, limit ${max})`,
    });
    if (typeof out !== 'string')
      return { ok: false, error: 'error', message: 'Bot returned an invalid result' };
    let parsed: { kind?: unknown; [k: string]: unknown };
    try {
      parsed = JSON.parse(out) as typeof parsed;
    } catch {
      return { ok: false, error: 'error', message: 'Bot returned an invalid result' };
    }
    switch (parsed.kind) {
      case 'undefined':
        return { ok: true, value: { kind: 'undefined' } };
      case 'string':
      case 'hl7': {
        const text = String(parsed.text);
        const size = Buffer.byteLength(text);
        if (size > max) return tooLarge(size);
        return { ok: true, value: { kind: parsed.kind, text } };
      }
      case 'json':
        if (Buffer.byteLength(out) > max + 32) return tooLarge(`more than ${max}`);
        return { ok: true, value: { kind: 'json', json: parsed.json } };
      case 'response':
        if (Buffer.byteLength(out) > max + 1024) return tooLarge(`more than ${max}`);
        return this.decodeResponse(parsed);
      case 'too-large':
        return tooLarge(`at least ${Number(parsed.size)}`);
      case 'error':
        return { ok: false, error: 'error', message: String(parsed.message) };
      default:
        return { ok: false, error: 'error', message: 'Bot returned an invalid result' };
    }
  }

  private decodeResponse(
    p: Record<string, unknown>,
  ): { ok: true; value: BotValue } | { ok: false; error: 'error'; message: string } {
    const status = p.status;
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
      return { ok: false, error: 'error', message: 'BotResponse status must be an integer from 200 to 599' };
    }
    const headers: Record<string, string> = {};
    const rawHeaders =
      p.headers && typeof p.headers === 'object' ? (p.headers as Record<string, unknown>) : {};
    for (const [k, v] of Object.entries(rawHeaders)) {
      const value = String(v);
      if (!HEADER_NAME.test(k) || !HEADER_VALUE.test(value) || FORBIDDEN_RESPONSE_HEADERS.test(k)) continue;
      headers[k.toLowerCase()] = value;
    }
    const contentType =
      typeof p.contentType === 'string' && HEADER_VALUE.test(p.contentType) ? p.contentType : undefined;
    if (contentType) headers['content-type'] = contentType;
    const b = p.body as { type?: unknown; text?: unknown; json?: unknown } | undefined;
    const body: ResponseBody =
      b?.type === 'text'
        ? { type: 'text', text: String(b.text) }
        : b?.type === 'json'
          ? { type: 'json', json: b.json }
          : { type: 'empty' };
    return { ok: true, value: { kind: 'response', status, contentType, headers, body } };
  }
}
