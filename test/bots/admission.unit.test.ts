// The admission of bot input before its body is read: the places of admitted requests count with the running
// executions against the project's and the server's shares, and pass to the execution that takes them over.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { InputAdmission } from '../../src/bots/admission.js';

/** An admission over a fake sandbox whose running executions the test sets. */
function admission(project: number, server: number) {
  const running = new Map<string, number>();
  const a = new InputAdmission({ project, server }, (p) =>
    p === undefined ? [...running.values()].reduce((x, y) => x + y, 0) : (running.get(p) ?? 0),
  );
  return { a, running };
}

const refusal = (fn: () => unknown): ApiError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('admitted');
};

describe('InputAdmission', () => {
  it("counts admitted requests with running executions against the project's share (429, Retry-After)", () => {
    const { a, running } = admission(2, 10);
    running.set('p', 1);
    const release = a.admit('p');
    const e = refusal(() => a.admit('p'));
    expect(e.status).toBe(429);
    expect(e.headers).toEqual({ 'Retry-After': '1' });
    expect(e.message).toMatch(/BOT_PROJECT_MAX_CONCURRENT/);
    // Another project has its own share.
    a.admit('q');
    release();
    release(); // idempotent
    a.admit('p');
  });

  it("refuses with 503 when the server's share is spent", () => {
    const { a, running } = admission(5, 2);
    running.set('p', 1);
    a.admit('q');
    const e = refusal(() => a.admit('r'));
    expect(e.status).toBe(503);
    expect(e.message).toMatch(/BOT_MAX_CONCURRENT/);
  });

  it('hands a place over to the execution, which gives it back once', () => {
    const { a } = admission(1, 10);
    const request = {};
    a.handOver(request, a.admit('p'));
    expect(refusal(() => a.admit('p')).status).toBe(429);
    a.takeOver(request);
    a.takeOver(request); // a nested execution of the same request: nothing left to release
    const again = a.admit('p');
    expect(refusal(() => a.admit('p')).status).toBe(429);
    again();
  });
});
