// Reads import files without parsing them whole (no streaming JSON parser is installed; a token-by-token one
// would build every value in JavaScript, where JSON.parse is native): a small scanner tracks strings and nesting
// over the file's chunks, cuts out each resource (a plain file's value, each NDJSON line, each Bundle entry's
// `resource`) and parses only that text. A CodeSystem's own `concept` array is cut out too: its head (the members
// before `concept`) is handed over first, then each top-level concept (with its nested children) one at a time,
// then the members after the array (the tail). So a 1,000,000-concept file is held a concept subtree at a time,
// not as a tree of objects. The scanner checks nesting only; each cut-out text is checked by JSON.parse (the
// commas between top-level concepts are not: a missing one goes unnoticed).
import fs from 'node:fs';

/** What the scanner cuts out, in file order. */
type ScanEvent =
  | { kind: 'value'; where: string; text: string }
  | { kind: 'head'; where: string; text: string }
  | { kind: 'concept'; text: string }
  | { kind: 'tail'; text: string }
  | { kind: 'entry-without-resource'; where: string };

/** One resource of an import file: parsed whole, or a CodeSystem whose concepts come one at a time. */
export type ImportItem =
  | { where: string; resource: unknown }
  | {
      where: string;
      /** The CodeSystem's members before `concept` (`concept` itself is absent). */
      head: Record<string, unknown>;
      /** Its top-level concepts (each with its nested `concept`), in order; read them once, before the next item. */
      concepts: AsyncIterable<unknown>;
      /** The members after `concept`: known once `concepts` has been read to its end. */
      tail(): Record<string, unknown> | undefined;
    };

const enum Role {
  Other,
  /** A resource object whose text is being cut out. */
  Resource,
  Bundle,
  Entries,
  Entry,
  /** A CodeSystem's `concept` array, cut out element by element. */
  Concepts,
}

const enum Cap {
  None,
  Resource,
  Element,
  Tail,
  Scalar,
}

/** The scanner over one file's chunks (see the file comment). */
class Scanner {
  private depth = 0;
  private inString = false;
  private escape = false;
  private readonly role: Role[] = [Role.Other];
  private readonly key: string[] = [''];
  private readonly afterColon: boolean[] = [false];
  private readonly rt: string[] = [''];
  private readonly keyPos: number[] = [0];
  private stringStart = -1;
  private stringParts: string[] = [];
  private cap = Cap.None;
  private capStart = -1;
  private capParts: string[] = [];
  private capLen = 0;
  /** Depth of the resource being cut out (its members' depth). */
  private resDepth = 0;
  private resWhere = '';
  private junk = false;
  private entryIndex = -1;
  private entryHasResource = false;
  private line = 1;
  private roots = 0;
  /** The root object's `entry` was passed before its resourceType said Bundle: it is kept whole instead. */
  private rootSawEntry = false;

  constructor(
    private readonly file: string,
    private readonly ndjson: boolean,
  ) {}

  /** Scans one chunk; returns what it completed. */
  feed(text: string): ScanEvent[] {
    const out: ScanEvent[] = [];
    if (this.cap !== Cap.None) this.capStart = 0;
    if (this.stringStart >= 0) this.stringStart = 0;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (ch === 92 /* \ */) this.escape = true;
        else if (ch === 34 /* " */) {
          this.inString = false;
          if (this.stringStart >= 0) this.endString(text, i);
        }
        continue;
      }
      const d = this.depth;
      if (this.cap === Cap.Scalar) {
        if (ch === 10 /* \n */) {
          this.emitCaptured(text, i, (t) => out.push({ kind: 'value', where: this.resWhere, text: t }));
          this.line++;
        }
        continue;
      }
      switch (ch) {
        case 34 /* " */:
          this.inString = true;
          if (d === 0) this.startRoot(i, Cap.Scalar);
          else if (this.tracked(d)) {
            if (!this.afterColon[d] && this.role[d] === Role.Resource && this.cap === Cap.Resource)
              this.keyPos[d] = this.capLen + (i - this.capStart);
            this.stringStart = i + 1;
          } else if (this.role[d] === Role.Entries || this.role[d] === Role.Concepts) this.element(d, out);
          break;
        case 58 /* : */:
          if (d > 0) this.afterColon[d] = true;
          break;
        case 44 /* , */:
          if (d > 0) {
            this.afterColon[d] = false;
            this.junk = false;
          }
          break;
        case 123 /* { */:
        case 91 /* [ */:
          this.open(ch, d, i, text, out);
          break;
        case 125 /* } */:
        case 93 /* ] */:
          this.close(d, i, text, out);
          break;
        case 32:
        case 9:
        case 13:
          break;
        case 10:
          if (d === 0) this.line++;
          break;
        default:
          if (d === 0) this.startRoot(i, Cap.Scalar);
          else if (this.role[d] === Role.Entries || this.role[d] === Role.Concepts) this.element(d, out);
      }
    }
    if (this.cap !== Cap.None && this.capStart >= 0) {
      const part = text.slice(this.capStart);
      this.capParts.push(part);
      this.capLen += part.length;
    }
    if (this.inString && this.stringStart >= 0) this.stringParts.push(text.slice(this.stringStart));
    return out;
  }

  /** End of the file: a pending NDJSON scalar line, or an error when a value is unfinished. */
  end(): ScanEvent[] {
    if (this.cap === Cap.Scalar) {
      const text = this.capParts.join('');
      this.cap = Cap.None;
      return [{ kind: 'value', where: this.resWhere, text }];
    }
    if (this.depth !== 0 || this.inString) throw new Error(`${this.file}: not valid JSON (truncated)`);
    return [];
  }

  /** Keys and string values are read only where they decide something (resource, Bundle and entry members). */
  private tracked(d: number): boolean {
    const r = this.role[d];
    return r === Role.Resource || r === Role.Bundle || r === Role.Entry;
  }

  private endString(text: string, i: number): void {
    const s = this.stringParts.length
      ? this.stringParts.join('') + text.slice(0, i)
      : text.slice(this.stringStart, i);
    this.stringParts = [];
    this.stringStart = -1;
    const d = this.depth;
    if (!this.afterColon[d]) {
      this.key[d] = s;
      if (d === 1 && s === 'entry') this.rootSawEntry = true;
    } else if (this.key[d] === 'resourceType') {
      this.rt[d] = s;
      if (d === 1 && s === 'Bundle' && this.role[1] === Role.Resource && !this.ndjson && !this.rootSawEntry) {
        // A Bundle: its entries' resources are cut out one by one; the rest of it is not kept.
        this.role[1] = Role.Bundle;
        this.dropCapture();
      }
    }
  }

  /** A new element starts in an entry or concept array (a scalar or array element: not a resource/concept). */
  private element(d: number, out: ScanEvent[]): void {
    if (this.junk) return;
    this.junk = true;
    if (this.role[d] === Role.Entries) {
      this.entryIndex++;
      out.push({ kind: 'entry-without-resource', where: `${this.file} entry[${this.entryIndex}]` });
    } else out.push({ kind: 'concept', text: 'null' });
  }

  private startRoot(i: number, cap: Cap): void {
    if (!this.ndjson && this.roots > 0) throw new Error(`${this.file}: not valid JSON (more than one value)`);
    this.roots++;
    this.rootSawEntry = false;
    this.resWhere = this.ndjson ? `${this.file}:${this.line}` : this.file;
    this.startCapture(cap, i);
  }

  private open(ch: number, d: number, i: number, text: string, out: ScanEvent[]): void {
    const inner = d + 1;
    let role = Role.Other;
    if (d === 0) {
      this.startRoot(i, Cap.Resource);
      if (ch === 123) {
        role = Role.Resource;
        this.resDepth = 1;
      }
    } else {
      const parent = this.role[d];
      const key = this.afterColon[d] ? this.key[d] : '';
      if (parent === Role.Bundle && ch === 91 && key === 'entry' && d === 1) role = Role.Entries;
      else if (parent === Role.Entries) {
        this.junk = true;
        this.entryIndex++;
        if (ch === 123) {
          role = Role.Entry;
          this.entryHasResource = false;
        } else out.push({ kind: 'entry-without-resource', where: `${this.file} entry[${this.entryIndex}]` });
      } else if (parent === Role.Entry && ch === 123 && key === 'resource') {
        role = Role.Resource;
        this.entryHasResource = true;
        this.resDepth = inner;
        this.resWhere = `${this.file} entry[${this.entryIndex}]`;
        this.startCapture(Cap.Resource, i);
      } else if (
        parent === Role.Resource &&
        ch === 91 &&
        key === 'concept' &&
        d === this.resDepth &&
        this.rt[d] === 'CodeSystem' &&
        this.cap === Cap.Resource
      ) {
        // The head: the captured text up to the "concept" key, closed.
        const head = this.captured(text, i).slice(0, this.keyPos[d]).replace(/,\s*$/, '') + '}';
        this.dropCapture();
        out.push({ kind: 'head', where: this.resWhere, text: head });
        role = Role.Concepts;
        this.junk = false;
      } else if (parent === Role.Concepts) {
        this.junk = true;
        if (ch === 123) this.startCapture(Cap.Element, i);
        else out.push({ kind: 'concept', text: 'null' });
      }
    }
    this.depth = inner;
    this.role[inner] = role;
    this.key[inner] = '';
    this.afterColon[inner] = false;
    this.rt[inner] = '';
  }

  private close(d: number, i: number, text: string, out: ScanEvent[]): void {
    if (d === 0) throw new Error(`${this.file}: not valid JSON (unbalanced ${text[i]})`);
    const role = this.role[d];
    this.depth = d - 1;
    const parent = this.role[d - 1];
    if (role === Role.Resource) {
      if (this.cap === Cap.Tail) {
        const rest = this.captured(text, i + 1).replace(/^\s*,/, '');
        this.dropCapture();
        out.push({ kind: 'tail', text: '{' + rest });
      } else if (this.cap === Cap.Resource) {
        const where = this.resWhere;
        this.emitCaptured(text, i + 1, (t) => out.push({ kind: 'value', where, text: t }));
      }
    } else if (role === Role.Other && this.cap === Cap.Resource && d === 1) {
      const where = this.resWhere;
      this.emitCaptured(text, i + 1, (t) => out.push({ kind: 'value', where, text: t }));
    } else if (role === Role.Concepts) {
      this.startCapture(Cap.Tail, i + 1);
    } else if (parent === Role.Concepts && this.cap === Cap.Element) {
      this.emitCaptured(text, i + 1, (t) => out.push({ kind: 'concept', text: t }));
    } else if (role === Role.Entry && !this.entryHasResource) {
      out.push({ kind: 'entry-without-resource', where: `${this.file} entry[${this.entryIndex}]` });
    }
  }

  private startCapture(cap: Cap, i: number): void {
    this.cap = cap;
    this.capStart = i;
    this.capParts = [];
    this.capLen = 0;
  }

  private dropCapture(): void {
    this.cap = Cap.None;
    this.capStart = -1;
    this.capParts = [];
    this.capLen = 0;
  }

  /** The text captured so far, up to (not including) index `end` of the current chunk. */
  private captured(text: string, end: number): string {
    const last = text.slice(this.capStart, end);
    return this.capParts.length ? this.capParts.join('') + last : last;
  }

  private emitCaptured(text: string, end: number, emit: (t: string) => void): void {
    const t = this.captured(text, end);
    this.dropCapture();
    emit(t);
  }
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: not valid JSON (${(err as Error).message})`);
  }
}

/** The scanner's events for a file, chunk by chunk. */
async function* scanFile(file: string): AsyncGenerator<ScanEvent> {
  const scanner = new Scanner(file, /\.(ndjson|jsonl)$/i.test(file));
  for await (const chunk of fs.createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 }))
    yield* scanner.feed(chunk as string);
  yield* scanner.end();
}

/** The resources of a file (see the file comment): JSON resource, Bundle (entry by entry) or NDJSON (line by line). */
export async function* readImportItems(file: string): AsyncGenerator<ImportItem> {
  const events = scanFile(file);
  for (;;) {
    const next = await events.next();
    if (next.done) return;
    const ev = next.value;
    if (ev.kind === 'value') {
      const value = parseJson(ev.text, ev.where) as { resourceType?: unknown; entry?: unknown } | null;
      if (value && value.resourceType === 'Bundle' && ev.where === file) {
        // A Bundle whose resourceType came after its entries: parsed whole, handed out entry by entry.
        const entries = Array.isArray(value.entry)
          ? (value.entry as Array<{ resource?: unknown } | null>)
          : [];
        for (let i = 0; i < entries.length; i++)
          yield { where: `${file} entry[${i}]`, resource: entries[i]?.resource };
      } else yield { where: ev.where, resource: value };
    } else if (ev.kind === 'entry-without-resource') yield { where: ev.where, resource: undefined };
    else if (ev.kind === 'head') {
      const where = ev.where;
      const head = parseJson(ev.text, where) as Record<string, unknown>;
      let tail: Record<string, unknown> | undefined;
      let index = 0;
      const concepts = async function* (): AsyncGenerator<unknown> {
        for (;;) {
          const e = await events.next();
          if (e.done) throw new Error(`${file}: not valid JSON (truncated)`);
          if (e.value.kind === 'concept') yield parseJson(e.value.text, `${where} concept[${index++}]`);
          else if (e.value.kind === 'tail') {
            tail = parseJson(e.value.text, where) as Record<string, unknown>;
            return;
          }
        }
      };
      yield { where, head, concepts: concepts(), tail: () => tail };
      // The importer stopped early (a refused resource): skip to the end of this one.
      while (tail === undefined) {
        const e = await events.next();
        if (e.done) throw new Error(`${file}: not valid JSON (truncated)`);
        if (e.value.kind === 'tail') tail = {};
      }
    }
  }
}

/** Every resource of a file parsed whole (a streamed CodeSystem is put back together), in file order. */
export async function* readResources(file: string): AsyncGenerator<{ where: string; resource: unknown }> {
  for await (const item of readImportItems(file)) {
    if ('resource' in item) {
      yield item;
      continue;
    }
    const concept: unknown[] = [];
    for await (const c of item.concepts) concept.push(c);
    yield { where: item.where, resource: { ...item.head, concept, ...item.tail() } };
  }
}
