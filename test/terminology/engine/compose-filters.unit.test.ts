// Compose filters: notSelectable as the IG reads it, and the time budget of regex filters (the event loop keeps
// turning; one budget for all the regex filters of an expansion).
import { describe, expect, it } from 'vitest';
import {
  ExpansionEngine,
  TerminologyError,
  type CodeSystemResource,
  type ValueSetInclude,
  type ValueSetResource,
} from '../../../src/terminology/engine/index.js';
import { TestResolver, standardResolver, LIMITS, vsOf, codes } from './helpers.js';

describe('expandValueSet: notSelectable', () => {
  const cs = (
    code: string,
    uri = 'http://hl7.org/fhir/concept-properties#notSelectable',
  ): CodeSystemResource => ({
    resourceType: 'CodeSystem',
    url: `http://example.org/cs/ns-${code}`,
    content: 'complete',
    property: [{ code, uri, type: 'boolean' }],
    concept: [
      { code: 'U', display: 'Says nothing' },
      { code: 'S', display: 'Selectable', property: [{ code, valueBoolean: false }] },
      { code: 'NS', display: 'Not selectable', property: [{ code, valueBoolean: true }] },
    ],
  });
  const r = standardResolver();
  r.addCodeSystem(cs('notSelectable'));
  r.addCodeSystem(cs('not-selectable'));
  const engine = new ExpansionEngine();
  const expand = (include: ValueSetInclude) => engine.expand(vsOf([include]), {}, r, LIMITS);

  it('notSelectable = false selects the concepts that say so; = true the abstract ones', async () => {
    const system = 'http://example.org/cs/ns-notSelectable';
    const f = (value: string) => [{ property: 'notSelectable', op: '=', value }];
    expect(codes(await expand({ system, filter: f('false') }))).toEqual(['S']);
    expect(codes(await expand({ system, filter: f('true') }))).toEqual(['NS']);
  });

  it('a property declared with the notSelectable uri under another code makes concepts abstract', async () => {
    const res = await expand({ system: 'http://example.org/cs/ns-not-selectable' });
    expect(res.expansion.contains!.filter((c) => c.abstract).map((c) => c.code)).toEqual(['NS']);
  });
});

describe('regex filter budget', () => {
  it('yields the event loop while a costly regex filter runs, and answers 422 too-costly past its budget', async () => {
    const r = new TestResolver();
    // 60,000 codes of 150 characters: a 60-character alternation costs the engine real work per code (~90 ms on a
    // quiet machine here), well past the first 10 ms slice, so the 5 ms budget below is spent on any machine.
    const concepts = Array.from({ length: 60_000 }, (_, i) => ({ code: `${'ab'.repeat(75)}${i}` }));
    r.addCodeSystem({
      resourceType: 'CodeSystem',
      url: 'http://example.org/long-codes',
      content: 'complete',
      concept: concepts,
    } as CodeSystemResource);
    const pattern = `(${Array.from({ length: 12 }, (_, i) => `a${i}b`).join('|')}|ab|ba)*z`;
    const vs: ValueSetResource = {
      resourceType: 'ValueSet',
      compose: {
        include: [
          {
            system: 'http://example.org/long-codes',
            filter: [{ property: 'code', op: 'regex', value: pattern }],
          },
        ],
      },
    };
    const engine = new ExpansionEngine();
    // The event loop keeps turning: a timer every 5 ms records the longest gap while the filter runs.
    let worstGap = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    const err = await engine
      .expand(vs, {}, r, { maxUnpaged: 100_000, regex: { maxPatternLength: 1000, budgetMs: 5 } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    clearInterval(timer);
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(TerminologyError);
    expect((err as TerminologyError).status).toBe(422);
    expect((err as TerminologyError).issueCode).toBe('too-costly');
    expect((err as TerminologyError).message).toMatch(/EXPAND_REGEX_BUDGET_MS/);
    expect(elapsed).toBeLessThan(2_000);
    // Slices are ~10 ms; generous margin for a loaded machine.
    expect(worstGap).toBeLessThan(250);
  });

  it('the budget covers all the regex filters of one expansion, not each one', async () => {
    const r = new TestResolver();
    const concepts = Array.from({ length: 30_000 }, (_, i) => ({ code: `${'ab'.repeat(75)}${i}` }));
    r.addCodeSystem({
      resourceType: 'CodeSystem',
      url: 'http://example.org/long-codes-2',
      content: 'complete',
      concept: concepts,
    } as CodeSystemResource);
    const pattern = `(${Array.from({ length: 12 }, (_, i) => `a${i}b`).join('|')}|ab|ba)*z`;
    // Measure one filter's time, then give a budget of twice that to an expansion with four such filters.
    const one: ValueSetResource = {
      resourceType: 'ValueSet',
      compose: {
        include: [
          {
            system: 'http://example.org/long-codes-2',
            filter: [{ property: 'code', op: 'regex', value: pattern }],
          },
        ],
      },
    };
    const engine = new ExpansionEngine();
    await engine.expand(one, { count: 0 }, r, { maxUnpaged: 100_000 }); // builds the index
    // The fastest of three runs: one slow run (a collection, a busy machine) must not inflate the budget.
    let oneMs = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await new ExpansionEngine().expand(one, { count: 0 }, r, { maxUnpaged: 100_000 });
      oneMs = Math.min(oneMs, performance.now() - t0);
    }
    const four: ValueSetResource = {
      resourceType: 'ValueSet',
      compose: {
        include: [1, 2, 3, 4].map((k) => ({
          system: 'http://example.org/long-codes-2',
          filter: [{ property: 'code', op: 'regex', value: `${pattern}|x${k}` }],
        })),
      },
    };
    const err = await new ExpansionEngine()
      .expand(four, { count: 0 }, r, {
        maxUnpaged: 100_000,
        regex: { maxPatternLength: 1000, budgetMs: Math.ceil(oneMs * 2) },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as TerminologyError)?.issueCode).toBe('too-costly');
  }, 60_000);
});
