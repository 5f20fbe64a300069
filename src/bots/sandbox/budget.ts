// The sandbox's budget (ExecutionBudget): executions running at once and isolate memory reserved, for the whole
// sandbox and per project. Memory counts each live isolate's heap limit from its creation to its disposal.
import type { BusyError, ExecutionBudget } from './types.js';

/** An isolate as the budget counts it. */
interface Reserved {
  readonly projectId: string;
  readonly memoryMb: number;
}

function busy(scope: 'project' | 'server', why: string): BusyError {
  return { ok: false, error: 'busy', scope, message: `Too many bot executions: ${why}; retry shortly` };
}

/** Counts what runs and what is reserved, and admits executions. */
export class BudgetTracker {
  /** Running executions, all projects and per project. */
  running = 0;
  private readonly projectRunning = new Map<string, number>();
  /** Reserved isolate memory (MB), all projects and per project; an isolate is counted from creation to kill. */
  reservedMb = 0;
  private readonly projectReservedMb = new Map<string, number>();
  private readonly reserved = new WeakSet<Reserved>();

  constructor(private readonly b: ExecutionBudget) {}

  /**
   * Admission: the project's and the server's share of concurrent executions and of isolate memory. An execution
   * that reuses its bot's warm isolate needs no new memory; otherwise idle isolates (the project's own first) are
   * disposed (`evictIdle`) to make room. Returns the refusal, if any.
   */
  admit(
    project: string,
    memoryMb: number,
    isWarm: () => boolean,
    evictIdle: (which: (e: Reserved) => boolean, enough: () => boolean) => void,
  ): BusyError | undefined {
    const b = this.b;
    if ((this.projectRunning.get(project) ?? 0) >= b.projectMaxConcurrent)
      return busy('project', `this project already runs ${b.projectMaxConcurrent} bot executions at once`);
    if (this.running >= b.maxConcurrent)
      return busy('server', `the server already runs ${b.maxConcurrent} bot executions at once`);
    if (isWarm()) return undefined;
    const projectFits = () => (this.projectReservedMb.get(project) ?? 0) + memoryMb <= b.projectMemoryMb;
    const serverFits = () => this.reservedMb + memoryMb <= b.memoryMb;
    if (!projectFits()) evictIdle((e) => e.projectId === project, projectFits);
    if (!projectFits())
      return busy(
        'project',
        `this project's bot isolates already hold ${this.projectReservedMb.get(project) ?? 0} of its ` +
          `${b.projectMemoryMb} MB (this bot needs ${memoryMb} MB)`,
      );
    if (!serverFits()) evictIdle(() => true, serverFits);
    if (!serverFits())
      return busy('server', `bot isolates already hold ${this.reservedMb} of the server's ${b.memoryMb} MB`);
    return undefined;
  }

  /** Executions running for `project`. */
  runningIn(project: string): number {
    return this.projectRunning.get(project) ?? 0;
  }

  /** An admitted execution starts. */
  begin(project: string): void {
    this.running++;
    this.projectRunning.set(project, (this.projectRunning.get(project) ?? 0) + 1);
  }

  /** An execution ended. */
  end(project: string): void {
    this.running--;
    const left = (this.projectRunning.get(project) ?? 1) - 1;
    if (left > 0) this.projectRunning.set(project, left);
    else this.projectRunning.delete(project);
  }

  /** Counts a new isolate's memory limit against the budget. */
  reserve(entry: Reserved): void {
    this.reserved.add(entry);
    this.reservedMb += entry.memoryMb;
    this.projectReservedMb.set(
      entry.projectId,
      (this.projectReservedMb.get(entry.projectId) ?? 0) + entry.memoryMb,
    );
  }

  /** Gives a disposed isolate's memory back (once). */
  unreserve(entry: Reserved): void {
    if (!this.reserved.has(entry)) return;
    this.reserved.delete(entry);
    this.reservedMb -= entry.memoryMb;
    const left = (this.projectReservedMb.get(entry.projectId) ?? 0) - entry.memoryMb;
    if (left > 0) this.projectReservedMb.set(entry.projectId, left);
    else this.projectReservedMb.delete(entry.projectId);
  }
}
