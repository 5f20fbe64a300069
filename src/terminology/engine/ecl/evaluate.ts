// ECL evaluation over one code system index: every sub-expression is a bitset of ordinals. Hierarchy operators walk
// the index's CSR hierarchy from all the concepts of their operand at once (each concept visited once); memberOf
// reads the refset members; refinements read the relationships (relations.ts): the attribute and value
// constraints are evaluated once, as bitsets, and each candidate's relationships are tested against them.
import { invalid } from '../errors.js';
import type { CodeSystemIndex } from '../code-system-index.js';
import { FLAG_INACTIVE } from '../code-system-index.js';
import type { Cardinality, EclExpr, EclRefinement, HierarchyOp } from './ast.js';
import { add, and, andNot, emptySet, forEach, fullSet, has, or, type Bitset } from './bitset.js';
import { relationsOf, type Relations } from './relations.js';

/** The concepts of an index an ECL expression selects. `*` is every active concept; a concept named by id is
 * itself whether active or not (it must exist: an unknown id selects nothing). */
export function evaluateEclExpression(index: CodeSystemIndex, expr: EclExpr, path = 'ecl'): Bitset {
  return new Evaluator(index, path).expr(expr);
}

const ANY = new WeakMap<CodeSystemIndex, Bitset>();

/** The stack of hierarchy walks (each concept is pushed at most once: `size` entries), shared: evaluation is
 * synchronous. */
let stackScratch = new Int32Array(0);
function walkStack(size: number): Int32Array {
  if (stackScratch.length < size) stackScratch = new Int32Array(size);
  return stackScratch;
}

class Evaluator {
  private rel?: Relations;

  constructor(
    private readonly index: CodeSystemIndex,
    private readonly path: string,
  ) {}

  private relations(): Relations {
    return (this.rel ??= relationsOf(this.index));
  }

  expr(e: EclExpr): Bitset {
    const n = this.index.size;
    switch (e.kind) {
      case 'concept': {
        const b = emptySet(n);
        const ord = this.index.ordinalOf(e.code);
        if (ord >= 0) add(b, ord);
        return b;
      }
      case 'any':
        return this.any();
      case 'hierarchy':
        return this.hierarchy(e.op, this.expr(e.expr));
      case 'memberOf': {
        const refsets = this.expr(e.expr);
        const out = emptySet(n);
        const members = this.relations().refsetMembers;
        forEach(refsets, (r) => {
          const m = members.get(r);
          if (m) for (let k = 0; k < m.length; k++) add(out, m[k]);
        });
        return out;
      }
      case 'and':
        return and(this.expr(e.left), this.expr(e.right));
      case 'or':
        return or(this.expr(e.left), this.expr(e.right));
      case 'minus':
        return andNot(this.expr(e.left), this.expr(e.right));
      case 'dot': {
        const sources = this.expr(e.expr);
        const types = this.expr(e.attribute);
        const { relOff, relType, relDest } = this.relations();
        const out = emptySet(n);
        forEach(sources, (o) => {
          for (let k = relOff[o]; k < relOff[o + 1]; k++)
            if (relDest[k] >= 0 && has(types, relType[k])) add(out, relDest[k]);
        });
        return out;
      }
      case 'refined':
        return this.refine(e.refinement, this.expr(e.focus));
    }
  }

  /** Every active concept (cached per index: it is read-only). */
  private any(): Bitset {
    let b = ANY.get(this.index);
    if (!b) {
      b = fullSet(this.index.size);
      const flags = this.index.flags;
      if ((this.index.flagsUnion & FLAG_INACTIVE) !== 0)
        for (let o = 0; o < flags.length; o++)
          if ((flags[o] & FLAG_INACTIVE) !== 0) b[o >>> 5] &= ~(1 << (o & 31));
      ANY.set(this.index, b);
    }
    return b.slice();
  }

  private hierarchy(op: HierarchyOp, from: Bitset): Bitset {
    const down = op.startsWith('<');
    const { childOff, childIdx, parentOff, parentIdx } = this.index.parts;
    const off = down ? childOff : parentOff;
    const idx = down ? childIdx : parentIdx;
    const self = op === '<<' || op === '>>' || op === '<<!' || op === '>>!';
    const out = self ? from.slice() : emptySet(this.index.size);
    if (op.endsWith('!')) {
      forEach(from, (o) => {
        for (let k = off[o]; k < off[o + 1]; k++) add(out, idx[k]);
      });
      return out;
    }
    // Transitive: a walk from every concept of `from` at once; `seen` keeps each concept visited once. (Bit
    // operations inline: this loop is most of an ECL evaluation's time.)
    const seen = emptySet(this.index.size);
    const stack = walkStack(this.index.size);
    let top = 0;
    for (let w = 0; w < from.length; w++) {
      let v = from[w];
      while (v !== 0) {
        const low = v & -v;
        v ^= low;
        const o = (w << 5) + 31 - Math.clz32(low);
        for (let k = off[o]; k < off[o + 1]; k++) {
          const x = idx[k];
          const bit = 1 << (x & 31);
          if ((seen[x >>> 5] & bit) === 0) {
            seen[x >>> 5] |= bit;
            stack[top++] = x;
          }
        }
      }
    }
    while (top > 0) {
      const cur = stack[--top];
      for (let k = off[cur]; k < off[cur + 1]; k++) {
        const x = idx[k];
        const bit = 1 << (x & 31);
        if ((seen[x >>> 5] & bit) === 0) {
          seen[x >>> 5] |= bit;
          stack[top++] = x;
        }
      }
    }
    return self ? or(out, seen) : seen;
  }

  /** The concepts of `focus` whose relationships satisfy the refinement. */
  private refine(r: EclRefinement, focus: Bitset): Bitset {
    switch (r.kind) {
      case 'and':
        return this.refine(r.right, this.refine(r.left, focus));
      case 'or':
        return or(this.refine(r.left, focus), this.refine(r.right, focus));
      case 'attribute': {
        const test = this.attributeTest(r);
        const { min, max } = r.cardinality ?? ONE_OR_MORE;
        const out = emptySet(this.index.size);
        if (min === 0 && max === undefined) return focus.slice();
        if (r.reverse) {
          const { off, rel, src } = this.relations().byDestination();
          forEach(focus, (o) => {
            let c = 0;
            for (let k = off[o]; k < off[o + 1]; k++) if (test(rel[k], src[k])) c++;
            if (c >= min && (max === undefined || c <= max)) add(out, o);
          });
          return out;
        }
        const { relOff, relDest } = this.relations();
        forEach(focus, (o) => {
          let c = 0;
          for (let k = relOff[o]; k < relOff[o + 1]; k++) if (test(k, relDest[k])) c++;
          if (c >= min && (max === undefined || c <= max)) add(out, o);
        });
        return out;
      }
      case 'group':
        return this.refineGroups(r.refinement, r.cardinality ?? ONE_OR_MORE, focus);
    }
  }

  /** A test of one relationship (its number, and the concept at its other end) against an attribute constraint. */
  private attributeTest(r: EclRefinement & { kind: 'attribute' }): (k: number, other: number) => boolean {
    const types = this.expr(r.attribute);
    const values = this.expr(r.value);
    const relType = this.relations().relType;
    const eq = r.op === '=';
    return (k, other) => has(types, relType[k]) && (other >= 0 && has(values, other)) === eq;
  }

  /** Attribute groups: the concepts of `focus` with a number of groups within `card` whose relationships
   * satisfy the refinement together. A relationship in group 0 (ungrouped) is a group of its own. */
  private refineGroups(r: EclRefinement, card: Cardinality, focus: Bitset): Bitset {
    const out = emptySet(this.index.size);
    if (card.min === 0 && card.max === undefined) return focus.slice();
    const test = this.compileGroup(r);
    const { relOff, relGroup } = this.relations();
    forEach(focus, (o) => {
      const from = relOff[o];
      const to = relOff[o + 1];
      let groups = 0;
      // Group numbers of a concept are few: a relationship starts a group when no earlier one has its number.
      for (let k = from; k < to; k++) {
        const g = relGroup[k];
        if (g !== 0) {
          let first = true;
          for (let j = from; j < k; j++)
            if (relGroup[j] === g) {
              first = false;
              break;
            }
          if (!first) continue;
        }
        if (test(from, to, k, g)) groups++;
      }
      if (groups >= card.min && (card.max === undefined || groups <= card.max)) add(out, o);
    });
    return out;
  }

  /** A test of one group of a concept (its relationships from..to, the group's number g; for group 0 only the
   * relationship `only`) against the refinement inside the braces. */
  private compileGroup(r: EclRefinement): (from: number, to: number, only: number, g: number) => boolean {
    switch (r.kind) {
      case 'and': {
        const a = this.compileGroup(r.left);
        const b = this.compileGroup(r.right);
        return (from, to, only, g) => a(from, to, only, g) && b(from, to, only, g);
      }
      case 'or': {
        const a = this.compileGroup(r.left);
        const b = this.compileGroup(r.right);
        return (from, to, only, g) => a(from, to, only, g) || b(from, to, only, g);
      }
      case 'group':
        throw invalid('ECL attribute groups do not nest', [this.path]);
      case 'attribute': {
        if (r.reverse)
          throw invalid('ECL reverse attributes (R) inside an attribute group are not supported', [
            this.path,
          ]);
        const test = this.attributeTest(r);
        const { min, max } = r.cardinality ?? ONE_OR_MORE;
        const { relGroup, relDest } = this.relations();
        return (from, to, only, g) => {
          let c = 0;
          if (g === 0) c = test(only, relDest[only]) ? 1 : 0;
          else for (let k = from; k < to; k++) if (relGroup[k] === g && test(k, relDest[k])) c++;
          return c >= min && (max === undefined || c <= max);
        };
      }
    }
  }
}

const ONE_OR_MORE: Cardinality = { min: 1, max: undefined };
