// Admission of a bot execution before its input is read: a `$execute` body (up to BOT_INPUT_LIMIT, inflated) costs
// memory and event-loop time to read, parse and hand to the isolate, so a project that already runs its share of
// executions gets its 429 (the server's share spent: 503) before a byte of the body is read. An admitted request
// holds a place in the same concurrency budget as running executions until its execution takes it over (the sandbox
// admits it in the same synchronous stretch, so no other request can take the place in between) or it ends.
import { ApiError } from '../core/errors.js';
import { ProjectCounts } from '../core/project-counts.js';

/** Seconds a refused request is told to wait (as for a refused execution: executions are short). */
const RETRY_AFTER_SEC = 1;

/** The concurrency shares, as the sandbox's budget has them. */
export interface AdmissionLimits {
  /** BOT_PROJECT_MAX_CONCURRENT */
  project: number;
  /** BOT_MAX_CONCURRENT */
  server: number;
}

/** Counts the requests admitted and not yet executing, on top of the executions running. */
export class InputAdmission {
  private readonly admitted = new ProjectCounts();
  /** The place of an admitted request, by the request facts its GraphQL context carries (see handOver). */
  private readonly handedOver = new WeakMap<object, () => void>();

  constructor(
    private readonly limits: AdmissionLimits,
    /** Executions running now, for a project or (no argument) all of them. */
    private readonly running: (projectId?: string) => number,
  ) {}

  /** Admits one request of `projectId` or throws 429 (the project's share spent) / 503 (the server's); returns
   * the release of its place (idempotent). */
  admit(projectId: string): () => void {
    const mine = this.running(projectId) + this.admitted.of(projectId);
    const retry = { headers: { 'Retry-After': String(RETRY_AFTER_SEC) } };
    if (mine >= this.limits.project)
      throw new ApiError(
        429,
        'throttled',
        `Too many bot executions: this project already runs ${this.limits.project} bot executions at once ` +
          '(BOT_PROJECT_MAX_CONCURRENT); retry shortly',
        retry,
      );
    if (this.running() + this.admitted.total >= this.limits.server)
      throw new ApiError(
        503,
        'throttled',
        `Too many bot executions: the server already runs ${this.limits.server} bot executions at once ` +
          '(BOT_MAX_CONCURRENT); retry shortly',
        retry,
      );
    return this.admitted.take(projectId);
  }

  /** Hands an admitted place to the execution of the operation whose context carries `request`. */
  handOver(request: object, release: () => void): void {
    this.handedOver.set(request, release);
  }

  /** Releases the place handed over for `request`, if any: called just before the sandbox admits the execution. */
  takeOver(request: object): void {
    const release = this.handedOver.get(request);
    if (!release) return;
    this.handedOver.delete(request);
    release();
  }
}
