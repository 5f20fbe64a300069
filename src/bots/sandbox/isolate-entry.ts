// One isolate per bot (project, bot, code version, memory limit): the scripts compiled into it (preludes, the bot
// runtime, the bot's module), its warm contexts (one execution at a time each) and its running executions; it is
// disposed when it runs out of time or memory, and retired when replaced or evicted.
import ivm from './isolated-vm.js';
import { performance } from 'node:perf_hooks';
import type { ExecState } from './execution.js';
import { HostBridge } from './host-bridge.js';
import { RUNTIME_SOURCE, wrapModule } from './runtime-source.js';
import { HL7_CONTENT_TYPE, type ResolvedOptions } from './types.js';

/** Warm contexts kept per isolate for concurrent executions of one bot (more are released after use). As many as
 * one project may run at once (BOT_PROJECT_MAX_CONCURRENT's default): with 4, a bot under 16 concurrent callers
 * built and dropped a context for most executions (bench: ~1,100/s, p50 ~9 ms instead of ~3,000/s). Contexts live
 * in the bot's own isolate, so they count against its memoryLimit, not the server's. */
const MAX_IDLE_CONTEXTS = 16;

/** A context and the bot runtime's entry point in it. */
export interface ContextHandle {
  context: ivm.Context;
  run: ivm.Reference<(id: number, payload: string) => Promise<string>>;
}

/** Why an isolate was disposed. */
export type DeathReason =
  'timeout' | 'memory' | 'catastrophic' | 'evicted' | 'replaced' | 'disposed' | 'setup' | 'recycled';

/** What an isolate needs from the pool that holds it. */
export interface IsolateOwner {
  /** Compiles a trusted script, with V8's code cache shared across isolates. */
  compileCached(isolate: ivm.Isolate, source: string, filename: string): Promise<ivm.Script>;
  /** The isolate was disposed: forget it and give its memory back. */
  died(entry: IsolateEntry): void;
}

/** A bot's isolate: its compiled scripts, warm contexts and live executions. */
export class IsolateEntry {
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
  private readonly bridge: HostBridge;

  constructor(
    private readonly owner: IsolateOwner,
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
    this.bridge = new HostBridge(this.executions, opts, projectId);
  }

  private compileScripts(): Promise<{ preludes: ivm.Script[]; runtime: ivm.Script; user: ivm.Script }> {
    this.scripts ??= (async () => {
      const preludes: ivm.Script[] = [];
      for (const [i, source] of this.opts.preludes.entries()) {
        preludes.push(await this.owner.compileCached(this.isolate, source, `prelude-${i}.js`));
      }
      const runtime = await this.owner.compileCached(this.isolate, RUNTIME_SOURCE, 'bot-runtime.js');
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
      const run = (await init.apply(undefined, [...this.bridge.handles(), factory.derefInto(), config], {
        result: { reference: true },
        timeout: 10_000,
      })) as ContextHandle['run'];
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
    this.owner.died(this);
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
