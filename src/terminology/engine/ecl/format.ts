// The canonical text of a parsed ECL expression: fully parenthesised, terms and comments dropped. Equal texts mean
// equal constraints (the result cache's key).
import type { Cardinality, EclExpr, EclRefinement } from './ast.js';

export function formatEcl(e: EclExpr): string {
  switch (e.kind) {
    case 'concept':
      return e.code;
    case 'any':
      return '*';
    case 'hierarchy':
      return `${e.op}${sub(e.expr)}`;
    case 'memberOf':
      return `^${sub(e.expr)}`;
    case 'and':
    case 'or':
    case 'minus':
      return `(${formatEcl(e.left)} ${e.kind.toUpperCase()} ${formatEcl(e.right)})`;
    case 'refined':
      return `(${formatEcl(e.focus)}:${formatRefinement(e.refinement)})`;
    case 'dot':
      return `(${formatEcl(e.expr)}.${sub(e.attribute)})`;
  }
}

/** An operand of an operator: bare when it is a concept or `*`, else in parentheses. (Compound expressions format
 * in parentheses; an attribute name needs none beyond those: the parser tells `(<< 1 OR << 2) = x` from a
 * refinement in parentheses by the comparison after them.) */
function sub(e: EclExpr): string {
  const s = formatEcl(e);
  return e.kind === 'hierarchy' || e.kind === 'memberOf' ? `(${s})` : s;
}

function card(c: Cardinality | undefined): string {
  return c ? `[${c.min}..${c.max ?? '*'}]` : '';
}

export function formatRefinement(r: EclRefinement): string {
  switch (r.kind) {
    case 'and':
    case 'or':
      return `(${formatRefinement(r.left)} ${r.kind.toUpperCase()} ${formatRefinement(r.right)})`;
    case 'group':
      return `${card(r.cardinality)}{${formatRefinement(r.refinement)}}`;
    case 'attribute':
      return `${card(r.cardinality)}${r.reverse ? 'R ' : ''}${formatEcl(r.attribute)}${r.op}${sub(r.value)}`;
  }
}
