// The ECL (SNOMED CT Expression Constraint Language 2.x) syntax tree the parser builds and the evaluator reads.

/** The hierarchy operators: descendants (`<`), descendants or self (`<<`), children (`<!`), children or self
 * (`<<!`), and the same upwards (`>`, `>>`, `>!`, `>>!`). */
export type HierarchyOp = '<' | '<<' | '<!' | '<<!' | '>' | '>>' | '>!' | '>>!';

/** An expression constraint: a set of concepts. */
export type EclExpr =
  | { kind: 'concept'; code: string }
  | { kind: 'any' }
  | { kind: 'hierarchy'; op: HierarchyOp; expr: EclExpr }
  | { kind: 'memberOf'; expr: EclExpr }
  | { kind: 'and' | 'or' | 'minus'; left: EclExpr; right: EclExpr }
  | { kind: 'refined'; focus: EclExpr; refinement: EclRefinement }
  /** `expr . attribute`: the values of the attribute on the concepts of expr. */
  | { kind: 'dot'; expr: EclExpr; attribute: EclExpr };

/** A cardinality `[min..max]` (max undefined: `*`). */
export interface Cardinality {
  min: number;
  max: number | undefined;
}

/** A refinement: what a concept's attributes (relationships) must satisfy. */
export type EclRefinement =
  | { kind: 'and' | 'or'; left: EclRefinement; right: EclRefinement }
  | {
      kind: 'attribute';
      cardinality?: Cardinality;
      /** `R`: the concept is the value (destination) of the relationship, not its source. */
      reverse: boolean;
      attribute: EclExpr;
      op: '=' | '!=';
      value: EclExpr;
    }
  | { kind: 'group'; cardinality?: Cardinality; refinement: EclRefinement };
