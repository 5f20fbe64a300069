// Bounds of what one ECL expression may ask for, checked while it is read (before any evaluation).

export interface EclLimits {
  /** The longest expression accepted, in characters (checked before anything is read). */
  maxLength: number;
  /** The deepest nesting of parentheses, groups and nested constraints. */
  maxDepth: number;
  /** The most operators and concept references one expression may hold. */
  maxOperators: number;
}

export const DEFAULT_ECL_LIMITS: Readonly<EclLimits> = Object.freeze({
  maxLength: 65_536,
  maxDepth: 50,
  maxOperators: 2_000,
});
