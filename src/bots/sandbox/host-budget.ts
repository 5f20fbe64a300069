// What bots' host calls (`medplum.*`, fetch) may cost a project across all its executions at once: host calls in
// flight (more wait their turn) and a rate of writes (a token bucket: a write waits for its token up to
// MAX_WRITE_WAIT_MS, beyond that it is refused). The per-execution budgets (calls, bytes) are in host-bridge.ts.
import { performance } from 'node:perf_hooks';

/** Longest a write waits for the project's write rate before it is refused. */
export const MAX_WRITE_WAIT_MS = 1000;

/** The project-wide limits (see HostCallLimits in types.ts). */
export interface ProjectHostLimits {
  /** Host calls of one project's executions running at once (more wait). */
  projectMaxInFlight: number;
  /** Writes per second one project's bots may make (burst: as many). */
  projectWritesPerSecond: number;
}

/** One project's host calls: those in flight, those waiting, and its bucket of write tokens. */
export class ProjectHostBudget {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  private tokens: number;
  private refilled = performance.now();

  constructor(
    private readonly limits: ProjectHostLimits,
    /** Called when the project has nothing in flight or waiting (the owner may forget it). */
    private readonly onIdle: () => void,
  ) {
    this.tokens = limits.projectWritesPerSecond;
  }

  /** Waits for a place among the project's host calls in flight; returns its release (idempotent). */
  async enter(): Promise<() => void> {
    if (this.inFlight >= this.limits.projectMaxInFlight) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.inFlight++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The place passes straight to the next waiter: nothing can take it in between.
      if (next) next();
      else if (--this.inFlight === 0) this.onIdle();
    };
  }

  /** Takes a write token: resolves true once it is this write's turn (at most MAX_WRITE_WAIT_MS away), false
   * (nothing taken) when the project's rate would make it wait longer, or when `deadline` (performance.now()
   * time) comes first. */
  async takeWrite(deadline: number): Promise<boolean> {
    const rate = this.limits.projectWritesPerSecond;
    const now = performance.now();
    this.tokens = Math.min(rate, this.tokens + ((now - this.refilled) * rate) / 1000);
    this.refilled = now;
    // Tokens may go below zero: each write reserves its place in line, and waits until its token has grown.
    const waitMs = this.tokens >= 1 ? 0 : ((1 - this.tokens) * 1000) / rate;
    if (waitMs > MAX_WRITE_WAIT_MS || now + waitMs >= deadline) return false;
    this.tokens -= 1;
    if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
    return true;
  }

  /** True when the project holds nothing (no call in flight or waiting) and its bucket is full again. */
  idle(): boolean {
    const full =
      this.tokens + ((performance.now() - this.refilled) * this.limits.projectWritesPerSecond) / 1000 >=
      this.limits.projectWritesPerSecond;
    return this.inFlight === 0 && this.waiting.length === 0 && full;
  }
}

/** The host-call budgets of every project of one sandbox. */
export class HostBudgets {
  private readonly projects = new Map<string, ProjectHostBudget>();

  constructor(private readonly limits: ProjectHostLimits) {}

  /** The budget of `projectId` (made at first use; forgotten when idle, its bucket full). */
  of(projectId: string): ProjectHostBudget {
    let b = this.projects.get(projectId);
    if (!b) {
      const made: ProjectHostBudget = new ProjectHostBudget(this.limits, () => {
        if (made.idle() && this.projects.get(projectId) === made) this.projects.delete(projectId);
      });
      b = made;
      this.projects.set(projectId, b);
    }
    return b;
  }

  /** Projects with a budget in memory (for tests). */
  get size(): number {
    return this.projects.size;
  }
}
