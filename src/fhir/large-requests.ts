// How many large requests (a JSON body over LARGE_BODY_BYTES, a read streaming a big CodeSystem) run at once: per
// project and per server (docs/operations.md, Large requests). Each holds memory, a database connection (PostgreSQL
// reads run in one snapshot) or a long stream of statements; beyond the budget the answer is 429 with Retry-After,
// and only the project that spent its share waits.
import { ApiError } from '../core/errors.js';
import { ProjectCounts } from '../core/project-counts.js';

/** A JSON body larger than this (bytes) is a large request. */
export const LARGE_BODY_BYTES = 1024 * 1024;

/** Seconds a refused large request is told to wait. */
const RETRY_AFTER_SEC = 2;

export interface LargeRequestLimits {
  perProject: number;
  max: number;
}

/** Counts the large requests in progress. */
export class LargeRequests {
  private readonly held = new ProjectCounts();

  constructor(private readonly limits: LargeRequestLimits) {}

  /** Takes a slot for `projectId` (anonymous requests share one key) or throws 429; returns its release. */
  acquire(projectId: string | null, what: string): () => void {
    const key = projectId ?? '';
    const mine = this.held.of(key);
    if (mine >= this.limits.perProject || this.held.total >= this.limits.max) {
      const setting =
        mine >= this.limits.perProject
          ? `LARGE_REQUESTS_PER_PROJECT=${this.limits.perProject}`
          : `LARGE_REQUESTS_MAX=${this.limits.max}`;
      throw new ApiError(
        429,
        'throttled',
        `Too many large requests at once (${setting}): ${what} must wait; retry in ${RETRY_AFTER_SEC} s`,
        { headers: { 'Retry-After': String(RETRY_AFTER_SEC) } },
      );
    }
    return this.held.take(key);
  }

  /** Large requests in progress (for /healthz). */
  inProgress(): number {
    return this.held.total;
  }
}
