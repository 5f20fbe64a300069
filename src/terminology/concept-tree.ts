// The nested `concept` tree of a CodeSystem, rebuilt from its rows in document order, one row at a time: as JSON
// text (streamed responses: no tree is ever held in memory) or as objects (whole resources for GraphQL and bots).
// Both use one rule, so every read path returns the same tree: a concept is nested under its first parent when that
// parent is the row before it or one of that row's open ancestors (rows are written depth first, so a concept
// nested in the document comes right after its parent's earlier children), unless the link is (only) the
// concept's own `parent` property, which stays a property.
import type { CodeSystemConcept } from './engine/index.js';

/** A concept row as the tree needs it; designations and properties are JSON text (as stored). */
export interface TreeRow {
  code: string;
  display: string | null;
  definition: string | null;
  /** The first of the concept's parents (nesting first, then properties). */
  parent: string | null;
  designations: string | null;
  properties: string | null;
  /** The concept's own extensions (JSON text), when it has any. */
  extensions: string | null;
}

/** SELECT list (table alias-free) giving TreeRow columns, plus `ordinal` for paging. */
export const TREE_ROW_COLUMNS = `ordinal, code, display, definition, parents[1] AS parent,
  designations::text AS designations, properties::text AS properties, extensions::text AS extensions`;

/** True when the row's first parent comes from its own `parent` property (then it is not nested under it). */
function parentViaProperty(row: TreeRow): boolean {
  const text = row.properties;
  if (row.parent === null || text === null || !text.includes('"parent"')) return false;
  const props = JSON.parse(text) as Array<{
    code?: string;
    valueCode?: string;
    valueString?: string;
    valueCoding?: { code?: string };
  }>;
  return props.some(
    (p) => p.code === 'parent' && (p.valueCode ?? p.valueCoding?.code ?? p.valueString) === row.parent,
  );
}

/** Index in `open` (codes of the concepts still open, outermost first) of the one `row` nests under, or -1. */
function nestIndex(open: readonly string[], row: TreeRow): number {
  if (row.parent === null) return -1;
  const i = open.lastIndexOf(row.parent);
  if (i < 0 || parentViaProperty(row)) return -1;
  return i;
}

/** Writes the concept array as JSON text, a row at a time: `[` ... `]`. */
export class ConceptTreeText {
  private open: string[] = [];
  private hasChildren: boolean[] = [];
  private roots = 0;

  /** The text that adds `row` (closing the concepts it is not nested in). */
  push(row: TreeRow): string {
    const at = nestIndex(this.open, row);
    let out = this.closeTo(at + 1);
    if (at < 0) {
      out += this.roots++ === 0 ? '[' : ',';
    } else {
      out += this.hasChildren[at] ? ',' : ',"concept":[';
      this.hasChildren[at] = true;
    }
    out += '{"code":' + JSON.stringify(row.code);
    if (row.extensions !== null) out += ',"extension":' + row.extensions;
    if (row.display !== null) out += ',"display":' + JSON.stringify(row.display);
    if (row.definition !== null) out += ',"definition":' + JSON.stringify(row.definition);
    if (row.designations !== null) out += ',"designation":' + row.designations;
    if (row.properties !== null) out += ',"property":' + row.properties;
    this.open.push(row.code);
    this.hasChildren.push(false);
    return out;
  }

  /** The text that closes everything: the end of the array (`[]` when there were no rows). */
  end(): string {
    return this.roots === 0 ? '[]' : this.closeTo(0) + ']';
  }

  private closeTo(depth: number): string {
    let out = '';
    while (this.open.length > depth) {
      this.open.pop();
      out += this.hasChildren.pop() ? ']}' : '}';
    }
    return out;
  }
}

/** Builds the concept array as objects, a row at a time (the same tree ConceptTreeText writes). */
export class ConceptTreeBuilder {
  readonly roots: CodeSystemConcept[] = [];
  private open: string[] = [];
  private openConcepts: CodeSystemConcept[] = [];

  push(row: TreeRow): void {
    const at = nestIndex(this.open, row);
    this.open.length = at + 1;
    this.openConcepts.length = at + 1;
    const c: CodeSystemConcept = { code: row.code };
    if (row.extensions !== null) c.extension = JSON.parse(row.extensions) as CodeSystemConcept['extension'];
    if (row.display !== null) c.display = row.display;
    if (row.definition !== null) c.definition = row.definition;
    if (row.designations !== null)
      c.designation = JSON.parse(row.designations) as CodeSystemConcept['designation'];
    if (row.properties !== null) c.property = JSON.parse(row.properties) as CodeSystemConcept['property'];
    if (at < 0) this.roots.push(c);
    else (this.openConcepts[at].concept ??= []).push(c);
    this.open.push(row.code);
    this.openConcepts.push(c);
  }
}
