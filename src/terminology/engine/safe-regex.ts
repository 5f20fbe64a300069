// User-supplied patterns (ValueSet compose filters with op `regex`) run on RE2JS, a linear-time engine: no
// backtracking, so `(a+)+` against "aaaa...Y" costs the length of the text times the size of the pattern, never
// an exponential. Patterns RE2 cannot run in linear time (backreferences, lookahead) are refused with a 400.
import { RE2JS } from 're2js';
import { TerminologyError, invalid } from './errors.js';

/** Limits of the regex filter (settings: see src/config.ts). */
export interface RegexLimits {
  /** Longest accepted pattern, in characters. */
  maxPatternLength: number;
  /** Wall-clock budget in ms of all the regex filters of one expansion (the event loop is yielded meanwhile). */
  budgetMs: number;
}

export const DEFAULT_REGEX_LIMITS: RegexLimits = { maxPatternLength: 1000, budgetMs: 2000 };

/** Largest text length x pattern length of one match (~0.1 s on RE2JS at worst). */
const MAX_MATCH_COST = 5_000_000;

/** A compiled pattern that matches a whole value (FHIR's regex filter is anchored). */
export interface SafeRegex {
  matches(value: string): boolean;
}

/** Compiles a filter pattern on the linear-time engine; a 400 naming the limit or the syntax error otherwise. */
export function compileFilterRegex(
  pattern: string,
  where: string,
  path: string,
  limits: RegexLimits,
): SafeRegex {
  if (pattern.length > limits.maxPatternLength) {
    throw invalid(
      `Filter ${where.slice(0, 200)}: the regular expression is ${pattern.length} characters long, more than the ` +
        `limit of ${limits.maxPatternLength} (EXPAND_REGEX_MAX_LENGTH)`,
      [path],
    );
  }
  try {
    const re = RE2JS.compile(pattern);
    // One match cannot be interrupted: its cost (text length x pattern size) is bounded up front.
    const maxText = Math.floor(MAX_MATCH_COST / Math.max(1, pattern.length));
    return {
      matches: (v) => {
        if (v.length > maxText) {
          throw new TerminologyError(
            422,
            'too-costly',
            `Filter ${where.slice(0, 200)}: a value of ${v.length} characters is too long for a ${pattern.length}-` +
              `character pattern (at most ${maxText}): use a shorter pattern`,
            [path],
          );
        }
        return re.matches(v);
      },
    };
  } catch (e) {
    throw invalid(
      `Filter ${where.slice(0, 200)}: invalid regular expression: ${(e as Error).message} ` +
        `(patterns use RE2 syntax: no backreferences, lookahead or lookbehind, repeat counts up to 1000)`,
      [path],
    );
  }
}

/** Yields to the event loop (after pending I/O callbacks). */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A slice of synchronous work: at most this long before the event loop gets a turn. */
const SLICE_MS = 10;

/**
 * Runs `step(i)` for i in [0, n), giving the event loop a turn every ~10 ms, and refusing with 422 too-costly once
 * the work plus what `spent` already holds for this expansion (wall clock) exceeds `budgetMs`. Returns
 * synchronously (no promise) when it finishes within the first slice, which is the usual case.
 */
export function runSliced(
  n: number,
  step: (i: number) => void,
  budgetMs: number,
  what: string,
  path: string,
  spent: RegexSpent = { ms: 0 },
): void | Promise<void> {
  const started = performance.now() - spent.ms;
  let sliceEnd = performance.now() + SLICE_MS;
  let i = 0;
  for (; i < n; i++) {
    step(i);
    if ((i & 63) === 63 && performance.now() > sliceEnd) {
      i++;
      break;
    }
  }
  if (i >= n) {
    spent.ms = performance.now() - started;
    return;
  }
  return (async () => {
    while (i < n) {
      await yieldToLoop();
      const now = performance.now();
      if (now - started > budgetMs) {
        throw new TerminologyError(
          422,
          'too-costly',
          `${what} took more than ${budgetMs} ms (EXPAND_REGEX_BUDGET_MS) after ${i} of ${n} concepts: ` +
            `use a simpler pattern or a smaller code system`,
          [path],
        );
      }
      spent.ms = now - started;
      sliceEnd = now + SLICE_MS;
      for (; i < n; i++) {
        step(i);
        if ((i & 63) === 63 && performance.now() > sliceEnd) {
          i++;
          break;
        }
      }
    }
    spent.ms = performance.now() - started;
  })();
}

/** Time spent on regex filters so far by one expansion (the budget covers all its filters, not each one). */
export interface RegexSpent {
  ms: number;
}
