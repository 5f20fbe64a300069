// The isolates of one sandbox, one per bot: found or made for each execution (replaced when the code version or
// memory limit changed), kept warm in LRU order up to maxIsolates, disposed when idle for idleTimeoutMs or to
// make room in the budget, recycled when dead contexts fill their heap. An isolate with a running execution is
// never evicted. Trusted scripts share V8's code cache across isolates.
import type ivm from './isolated-vm.js';
import { performance } from 'node:perf_hooks';
import type { BudgetTracker } from './budget.js';
import { IsolateEntry, type IsolateOwner } from './isolate-entry.js';
import type { ExecuteRequest, ResolvedOptions } from './types.js';

/** The live isolates of a sandbox. */
export class IsolatePool implements IsolateOwner {
  private readonly entries = new Map<string, IsolateEntry>();
  private readonly cachedData = new Map<string, ivm.ExternalCopy<ArrayBuffer>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly opts: ResolvedOptions,
    private readonly budget: BudgetTracker,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.opts.idleTimeoutMs, 30_000));
    this.sweeper.unref();
  }

  /** Live isolates. */
  get size(): number {
    return this.entries.size;
  }

  /** Compiles a trusted script with V8's code cache shared across isolates. */
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

  /** An isolate was disposed: it leaves the pool and gives its memory back. */
  died(entry: IsolateEntry): void {
    this.forget(entry);
    this.budget.unreserve(entry);
  }

  private forget(entry: IsolateEntry): void {
    for (const [key, e] of this.entries) {
      if (e === entry) this.entries.delete(key);
    }
  }

  /** The isolate for an execution: the bot's warm one, or a new one (reserved in the budget). */
  acquire(req: ExecuteRequest, memoryMb: number): IsolateEntry {
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
      this.budget.reserve(entry);
    }
    this.entries.set(key, entry);
    return entry;
  }

  /** The warm isolate an execution would reuse, if any. */
  warm(req: ExecuteRequest, memoryMb: number): IsolateEntry | undefined {
    const entry = this.entries.get(JSON.stringify([req.projectId, req.botId]));
    return entry && !entry.dead && entry.codeVersion === req.codeVersion && entry.memoryMb === memoryMb
      ? entry
      : undefined;
  }

  /** Disposes idle isolates matching `which`, least recently used first, until `enough()`. */
  evictIdle(which: (e: IsolateEntry) => boolean, enough: () => boolean): void {
    for (const [key, entry] of this.entries) {
      if (enough()) return;
      if (entry.executions.size === 0 && which(entry)) {
        this.entries.delete(key);
        entry.kill('evicted');
      }
    }
  }

  /** Disposes idle isolates, least recently used first, while there are more than maxIsolates. */
  evict(): void {
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
  checkHeap(entry: IsolateEntry): void {
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

  /** Disposes every isolate. */
  dispose(): void {
    clearInterval(this.sweeper);
    for (const entry of [...this.entries.values()]) entry.kill('disposed');
    this.entries.clear();
  }
}
