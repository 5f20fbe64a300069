// ECL 2.x parser (SNOMED CT Expression Constraint Language): recursive descent over the text, bounded before any
// work (length), while reading (nesting depth, operator count), so no input can overflow the stack or run long.
// Errors are 400 `invalid` naming the 1-based character position and what was expected there.
import { invalid, type TerminologyError } from '../errors.js';
import type { Cardinality, EclExpr, EclRefinement, HierarchyOp } from './ast.js';
import { DEFAULT_ECL_LIMITS, type EclLimits } from './limits.js';

/** Parses an ECL expression. `path` locates the expression in the request (the error's `expression`). */
export function parseEcl(
  text: string,
  path = 'ecl',
  limits: Readonly<EclLimits> = DEFAULT_ECL_LIMITS,
): EclExpr {
  if (text.length > limits.maxLength)
    throw invalid(
      `ECL expression too long: ${text.length} characters, at most ${limits.maxLength} are accepted`,
      [path],
    );
  const p = new Parser(text, path, limits);
  p.ws();
  if (p.atEnd()) throw p.fail('an expression constraint');
  const expr = p.expression(0);
  p.ws();
  if (!p.atEnd()) throw p.fail("AND, OR, MINUS, ':' or the end of the expression");
  return expr;
}

const HIERARCHY_OPS: readonly HierarchyOp[] = ['<<!', '<<', '<!', '<', '>>!', '>>', '>!', '>'];

class Parser {
  private i = 0;
  private operators = 0;

  constructor(
    private readonly s: string,
    private readonly path: string,
    private readonly limits: Readonly<EclLimits>,
  ) {}

  atEnd(): boolean {
    return this.i >= this.s.length;
  }

  /** Skips white space and comments. */
  ws(): void {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.i++;
      else if (c === 47 && s.charCodeAt(this.i + 1) === 42) {
        const end = s.indexOf('*/', this.i + 2);
        if (end < 0) throw this.fail("the end of the comment ('*/')");
        this.i = end + 2;
      } else return;
    }
  }

  fail(expected: string): TerminologyError {
    const found = this.atEnd()
      ? 'the end of the expression'
      : `'${this.s.slice(this.i, this.i + 12)}${this.s.length > this.i + 12 ? '...' : ''}'`;
    return invalid(`ECL syntax error at character ${this.i + 1}: expected ${expected}, found ${found}`, [
      this.path,
    ]);
  }

  private count(): void {
    if (++this.operators > this.limits.maxOperators)
      throw invalid(
        `ECL expression too complex: more than ${this.limits.maxOperators} operators and concept references ` +
          `(at character ${this.i + 1})`,
        [this.path],
      );
  }

  private enter(depth: number): void {
    if (depth > this.limits.maxDepth)
      throw invalid(
        `ECL expression nested too deeply: more than ${this.limits.maxDepth} levels (at character ${this.i + 1})`,
        [this.path],
      );
  }

  private peek(str: string): boolean {
    return this.s.startsWith(str, this.i);
  }

  /** A keyword (case-insensitive) not followed by a letter or digit. */
  private keyword(word: string): boolean {
    const s = this.s;
    if (s.length - this.i < word.length) return false;
    if (s.slice(this.i, this.i + word.length).toUpperCase() !== word) return false;
    const next = s.charCodeAt(this.i + word.length);
    return !((next >= 48 && next <= 57) || (next >= 65 && next <= 90) || (next >= 97 && next <= 122));
  }

  /** AND (or ','), OR, MINUS at the current position: consumed and returned. */
  private binaryOp(allowMinus: boolean): 'and' | 'or' | 'minus' | undefined {
    if (this.peek(',')) {
      this.i++;
      return 'and';
    }
    for (const [word, kind] of [
      ['AND', 'and'],
      ['OR', 'or'],
      ['MINUS', 'minus'],
    ] as const) {
      if (kind === 'minus' && !allowMinus) continue;
      if (this.keyword(word)) {
        this.i += word.length;
        return kind;
      }
    }
    return undefined;
  }

  /** expressionConstraint: refined, compound, dotted or a sub-expression. */
  expression(depth: number): EclExpr {
    this.enter(depth);
    const first = this.subExpression(depth);
    this.ws();
    if (this.peek(':')) {
      this.i++;
      this.count();
      this.ws();
      return { kind: 'refined', focus: first, refinement: this.refinement(depth + 1, false) };
    }
    if (this.peek('.')) {
      let expr = first;
      while (this.peek('.')) {
        this.i++;
        this.count();
        this.ws();
        expr = { kind: 'dot', expr, attribute: this.subExpression(depth + 1) };
        this.ws();
      }
      return expr;
    }
    let expr = first;
    let kind: 'and' | 'or' | 'minus' | undefined;
    for (;;) {
      const at = this.i;
      const op = this.binaryOp(true);
      if (!op) return expr;
      if (kind !== undefined && (op !== kind || op === 'minus')) {
        this.i = at;
        throw this.fail(
          `parentheses: ${kind.toUpperCase()} and ${op.toUpperCase()} ${kind === op ? 'are not associative' : 'may not be mixed'} without them`,
        );
      }
      kind = op;
      this.count();
      this.ws();
      expr = { kind: op, left: expr, right: this.subExpression(depth + 1) };
      this.ws();
    }
  }

  /** subExpressionConstraint: [hierarchy operator] [^] (concept reference | * | '(' expression ')'). */
  private subExpression(depth: number): EclExpr {
    this.enter(depth);
    this.ws();
    let op: HierarchyOp | undefined;
    for (const o of HIERARCHY_OPS) {
      if (this.peek(o)) {
        op = o;
        this.i += o.length;
        this.count();
        this.ws();
        break;
      }
    }
    let memberOf = false;
    if (this.peek('^')) {
      memberOf = true;
      this.i++;
      this.count();
      this.ws();
      if (this.peek('[')) throw this.fail('a concept (refset member field selection is not supported)');
    }
    let expr: EclExpr;
    const c = this.s.charCodeAt(this.i);
    if (c >= 48 && c <= 57) expr = this.conceptReference();
    else if (c === 42 /* * */) {
      this.i++;
      this.count();
      expr = { kind: 'any' };
    } else if (c === 40 /* ( */) {
      this.i++;
      this.ws();
      expr = this.expression(depth + 1);
      this.ws();
      if (!this.peek(')')) throw this.fail("')'");
      this.i++;
    } else throw this.fail("a concept id, '*' or '('");
    const save = this.i;
    this.ws();
    if (this.peek('{{')) throw this.fail('no filter ({{ ... }}: ECL filters are not supported)');
    this.i = save;
    if (memberOf) expr = { kind: 'memberOf', expr };
    if (op) expr = { kind: 'hierarchy', op, expr };
    return expr;
  }

  /** conceptId [ws '|' term '|']. */
  private conceptReference(): EclExpr {
    const s = this.s;
    const start = this.i;
    while (this.i < s.length && s.charCodeAt(this.i) >= 48 && s.charCodeAt(this.i) <= 57) this.i++;
    if (this.i - start > 18) {
      this.i = start;
      throw this.fail('a concept id of at most 18 digits');
    }
    const code = s.slice(start, this.i);
    this.count();
    const save = this.i;
    this.ws();
    if (this.peek('|')) {
      const end = s.indexOf('|', this.i + 1);
      if (end < 0) throw this.fail("the end of the term ('|')");
      this.i = end + 1;
    } else this.i = save;
    return { kind: 'concept', code };
  }

  /** eclRefinement (or, inGroup, an attribute set): sub-refinements joined by AND/',' or by OR (not both). */
  private refinement(depth: number, inGroup: boolean): EclRefinement {
    this.enter(depth);
    let r = this.subRefinement(depth, inGroup);
    let kind: 'and' | 'or' | undefined;
    for (;;) {
      this.ws();
      const at = this.i;
      const op = this.binaryOp(false) as 'and' | 'or' | undefined;
      if (!op) return r;
      if (kind !== undefined && op !== kind) {
        this.i = at;
        throw this.fail('parentheses: AND and OR may not be mixed without them');
      }
      kind = op;
      this.count();
      this.ws();
      r = { kind: op, left: r, right: this.subRefinement(depth + 1, inGroup) };
    }
  }

  /** An attribute, an attribute group, or a refinement in parentheses. */
  private subRefinement(depth: number, inGroup: boolean): EclRefinement {
    this.enter(depth);
    this.ws();
    if (this.peek('(') && !this.comparisonAfterParentheses()) {
      this.i++;
      this.ws();
      const r = this.refinement(depth + 1, inGroup);
      this.ws();
      if (!this.peek(')')) throw this.fail("')'");
      this.i++;
      return r;
    }
    const cardinality = this.peek('[') ? this.cardinality() : undefined;
    this.ws();
    if (this.peek('{')) {
      if (inGroup) throw this.fail('an attribute (groups do not nest)');
      this.i++;
      this.count();
      this.ws();
      const refinement = this.refinement(depth + 1, true);
      this.ws();
      if (!this.peek('}')) throw this.fail("'}'");
      this.i++;
      return { kind: 'group', cardinality, refinement };
    }
    let reverse = false;
    if (this.peek('R') && !/[A-Za-z]/.test(this.s.charAt(this.i + 1))) {
      reverse = true;
      this.i++;
      this.ws();
    }
    const attribute = this.subExpression(depth + 1);
    this.ws();
    let op: '=' | '!=';
    if (this.peek('!=')) op = '!=';
    else if (this.peek('=')) op = '=';
    else if (this.peek('<') || this.peek('>'))
      throw this.fail("'=' or '!=' (numeric comparisons are not supported)");
    else throw this.fail("'=' or '!='");
    this.i += op.length;
    this.count();
    this.ws();
    if (this.peek('#') || this.peek('"'))
      throw this.fail('an expression constraint (concrete values are not supported)');
    const value = this.subExpression(depth + 1);
    return { kind: 'attribute', cardinality, reverse, attribute, op, value };
  }

  /** At a '(' in a refinement: is it an attribute name in parentheses (`(<< 1 OR << 2) = x`), i.e. is the
   * matching ')' followed by '=' or '!='? Otherwise it is a refinement in parentheses. One scan to the matching
   * ')' (terms and comments skipped; the depth limit bounds how often text is scanned again). */
  private comparisonAfterParentheses(): boolean {
    const s = this.s;
    let depth = 0;
    for (let k = this.i; k < s.length; k++) {
      const c = s.charCodeAt(k);
      if (c === 124 /* | */) {
        const end = s.indexOf('|', k + 1);
        if (end < 0) return false;
        k = end;
      } else if (c === 47 /* / */ && s.charCodeAt(k + 1) === 42) {
        const end = s.indexOf('*/', k + 2);
        if (end < 0) return false;
        k = end + 1;
      } else if (c === 40) depth++;
      else if (c === 41 && --depth === 0) {
        const save = this.i;
        this.i = k + 1;
        try {
          this.ws();
          return this.peek('=') || this.peek('!=');
        } catch {
          return false;
        } finally {
          this.i = save;
        }
      }
    }
    return false;
  }

  /** '[' min '..' (max | '*') ']'. */
  private cardinality(): Cardinality {
    this.i++;
    this.ws();
    const min = this.integer('the minimum of the cardinality (a number)');
    this.ws();
    if (!this.peek('..')) throw this.fail("'..'");
    this.i += 2;
    this.ws();
    let max: number | undefined;
    if (this.peek('*')) this.i++;
    else {
      const at = this.i;
      max = this.integer("the maximum of the cardinality (a number or '*')");
      if (max < min) {
        this.i = at;
        throw this.fail(`a maximum of at least the minimum ${min}`);
      }
    }
    this.ws();
    if (!this.peek(']')) throw this.fail("']'");
    this.i++;
    this.count();
    return { min, max };
  }

  private integer(expected: string): number {
    const start = this.i;
    while (this.i - start < 10 && /[0-9]/.test(this.s.charAt(this.i))) this.i++;
    if (this.i === start || /[0-9]/.test(this.s.charAt(this.i))) {
      this.i = start;
      throw this.fail(expected);
    }
    return Number(this.s.slice(start, this.i));
  }
}
