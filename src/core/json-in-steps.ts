// JSON.parse of a big body (a FHIR request, a bot's input) without holding the event loop: a 45 MB CodeSystem took
// ~0.4 s in JSON.parse alone, plus the byte checks, in one synchronous stretch. Here one pass over the bytes (in
// slices, the event loop getting turns in between) finds the structure of the containers too big to parse at once,
// builds those itself, and hands everything else to JSON.parse in slices of a few hundred kB: the values (strings,
// numbers, small objects) are JSON.parse's own, so the result is the one JSON.parse would give (own `__proto__` keys
// included, duplicate keys: the last one wins). The same pass makes checkJsonBytes's checks (nesting depth, `\u0000`).
import { yieldIfHeld } from './turns.js';

/** A JSON syntax error (body-parser's `entity.parse.failed`: a 400 naming it). */
export class JsonStepsSyntaxError extends SyntaxError {}

/** Sizes (bytes) of the pieces handed to JSON.parse and of the containers built element by element. */
export interface StepSizes {
  /** Elements are handed to JSON.parse in slices of about this size. */
  batch: number;
  /** A container value bigger than this is built element by element instead of parsed at once. */
  promote: number;
  /** Bytes scanned between two chances to give the event loop a turn. */
  scanStep: number;
}

const DEFAULT_SIZES: StepSizes = { batch: 256 * 1024, promote: 256 * 1024, scanStep: 64 * 1024 };

// The bytes of JSON's structure (also read by the depth and NUL check of whole bodies, rest/json-body.ts).
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACE = 0x7d;
export const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
/** `\u0000` without its backslash, as it appears after one in JSON text. */
export const NUL_ESCAPE = Buffer.from('u0000');

/** A container being built element by element. */
interface Frame {
  isObject: boolean;
  value: Record<string, unknown> | unknown[];
  /** Nesting depth of this container's direct elements (the depth after its opening bracket). */
  depth: number;
  /** Start of the elements not yet parsed (after `[`/`{` or a comma); -1 while none are pending. */
  batchStart: number;
  /** Start of the current element (after `[`/`{` or its comma). */
  elemStart: number;
  /** Object: the position of the current element's colon (-1: not seen yet). */
  colon: number;
  /** The current element's value when it is a container: its opening bracket (-1 otherwise). */
  valueStart: number;
  /** After a container built element by element: where the text after it begins (must be blank up to the next
   * comma or the closing bracket). */
  after: number;
}

const isBlank = (buf: Buffer, start: number, end: number): boolean => {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return true;
};

/** Sets a key as JSON.parse does: an own data property, whatever its name (`__proto__` included). */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Parses JSON text in `buf` (UTF-8) like JSON.parse, giving the event loop turns; throws JsonStepsSyntaxError, or
 * a DepthError/NulError (400s naming the rule) found by the same checks as checkJsonBytes (`\u0000` only when
 * `onLimit.nul` is given: a bot's input may hold it). */
export async function parseJsonInSteps(
  buf: Buffer,
  maxDepth: number,
  onLimit: { tooDeep(): Error; nul?(): Error },
  sizes: StepSizes = DEFAULT_SIZES,
): Promise<unknown> {
  let start = 0;
  while (start < buf.length && isBlank(buf, start, start + 1)) start++;
  const first = buf[start];
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return parseSlice(buf, 0, buf.length, '', '');

  const frames: Frame[] = [];
  let root: unknown;
  const open = (at: number, depth: number): Frame => {
    const isObject = buf[at] === OPEN_BRACE;
    const f: Frame = {
      isObject,
      value: isObject ? {} : [],
      depth,
      batchStart: at + 1,
      elemStart: at + 1,
      colon: -1,
      valueStart: -1,
      after: -1,
    };
    frames.push(f);
    return f;
  };

  /** Parses the pending elements of `f` in [from, to) (a slice ending before a comma or the closing bracket). */
  const flush = (f: Frame, from: number, to: number): void => {
    if (from < 0 || isBlank(buf, from, to)) {
      // Nothing, or only blanks: fine for an empty container, a syntax error after a comma (`[1,]`, `[,1]`).
      if (from >= 0 && from > 0 && buf[from - 1] === COMMA)
        throw new JsonStepsSyntaxError('Unexpected comma');
      return;
    }
    if (f.isObject) {
      const part = parseSlice(buf, from, to, '{', '}') as Record<string, unknown>;
      const obj = f.value as Record<string, unknown>;
      for (const key of Object.keys(part)) setKey(obj, key, part[key]);
    } else {
      const part = parseSlice(buf, from, to, '[', ']') as unknown[];
      const arr = f.value as unknown[];
      for (let k = 0; k < part.length; k++) arr.push(part[k]);
    }
  };

  /** Builds the current element of `f` (a container starting at f.valueStart, scanned up to `at`) element by
   * element from now on: the elements before it are parsed, it is attached, its own state is rescanned. */
  const promote = (f: Frame, at: number): Frame => {
    if (f.batchStart >= 0 && f.batchStart < f.elemStart) flush(f, f.batchStart, f.elemStart - 1);
    f.batchStart = -1;
    const c = open(f.valueStart, f.depth + 1);
    if (f.isObject) {
      if (f.colon < 0 || !isBlank(buf, f.colon + 1, f.valueStart))
        throw new JsonStepsSyntaxError(`Expected ':' before position ${f.valueStart}`);
      const key = parseSlice(buf, f.elemStart, f.colon, '', '');
      if (typeof key !== 'string')
        throw new JsonStepsSyntaxError(`Expected a key at position ${f.elemStart}`);
      setKey(f.value as Record<string, unknown>, key, c.value);
    } else {
      if (!isBlank(buf, f.elemStart, f.valueStart))
        throw new JsonStepsSyntaxError(`Unexpected token at position ${f.elemStart}`);
      (f.value as unknown[]).push(c.value);
    }
    // The new frame's own elements so far: commas and colons at its level, and its current element's start.
    let depth = c.depth;
    let inString = false;
    for (let i = f.valueStart + 1; i < at; i++) {
      const ch = buf[i];
      if (inString) {
        if (ch === BACKSLASH) i++;
        else if (ch === QUOTE) inString = false;
        continue;
      }
      if (ch === QUOTE) inString = true;
      else if (ch === OPEN_BRACE || ch === OPEN_BRACKET) {
        if (depth === c.depth) c.valueStart = i;
        depth++;
      } else if (ch === CLOSE_BRACE || ch === CLOSE_BRACKET) depth--;
      else if (depth === c.depth) {
        if (ch === COMMA) {
          c.elemStart = i + 1;
          c.colon = -1;
          c.valueStart = -1;
        } else if (ch === COLON && c.colon < 0) c.colon = i;
      }
    }
    return c;
  };

  let top = open(start, 1);
  let depth = 1;
  let inString = false;
  const nul = onLimit.nul;
  const mayHaveNul = nul !== undefined && buf.indexOf(NUL_ESCAPE) !== -1;
  let promoteAt = Infinity;
  let nextTurn = sizes.scanStep;
  let i = start + 1;
  for (; i < buf.length; i++) {
    if (i >= nextTurn) {
      nextTurn = i + sizes.scanStep;
      const t = yieldIfHeld();
      if (t) await t;
    }
    const c = buf[i];
    if (inString) {
      if (c === BACKSLASH) {
        if (mayHaveNul && nul && buf[i + 1] === 0x75 && buf.compare(NUL_ESCAPE, 0, 5, i + 1, i + 6) === 0)
          throw nul();
        i++;
      } else if (c === QUOTE) inString = false;
      continue;
    }
    if (depth > top.depth && i >= promoteAt) {
      top = promote(top, i);
      promoteAt = top.valueStart >= 0 ? top.valueStart + sizes.promote : Infinity;
    }
    if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) throw onLimit.tooDeep();
      if (depth === top.depth + 1) {
        top.valueStart = i;
        promoteAt = i + sizes.promote;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === top.depth) {
        // The end of the container being built.
        if ((c === CLOSE_BRACE) !== top.isObject)
          throw new JsonStepsSyntaxError(`Unexpected '${String.fromCharCode(c)}' at position ${i}`);
        if (top.batchStart >= 0) flush(top, top.batchStart, i);
        else if (top.after >= 0 && !isBlank(buf, top.after, i))
          throw new JsonStepsSyntaxError(`Unexpected token at position ${top.after}`);
        frames.pop();
        const done = top;
        if (frames.length === 0) {
          root = done.value;
          depth--;
          i++;
          break;
        }
        top = frames[frames.length - 1];
        top.after = i + 1;
        top.valueStart = -1;
        promoteAt = Infinity;
      }
      depth--;
    } else if (depth === top.depth) {
      if (c === COMMA) {
        if (top.batchStart < 0) {
          if (top.after >= 0 && !isBlank(buf, top.after, i))
            throw new JsonStepsSyntaxError(`Unexpected token at position ${top.after}`);
          top.after = -1;
          top.batchStart = i + 1;
        } else if (i - top.batchStart >= sizes.batch) {
          flush(top, top.batchStart, i);
          top.batchStart = i + 1;
          const t = yieldIfHeld();
          if (t) await t;
        }
        top.elemStart = i + 1;
        top.colon = -1;
        top.valueStart = -1;
        promoteAt = Infinity;
      } else if (c === COLON && top.colon < 0) top.colon = i;
    }
  }
  if (frames.length > 0 || inString) throw new JsonStepsSyntaxError('Unexpected end of JSON input');
  if (!isBlank(buf, i, buf.length))
    throw new JsonStepsSyntaxError(`Unexpected non-whitespace character after JSON at position ${i}`);
  return root;
}

/** JSON.parse of buf[from, to) wrapped in `open`/`close`; its SyntaxError as a JsonStepsSyntaxError. */
function parseSlice(buf: Buffer, from: number, to: number, open: string, close: string): unknown {
  try {
    return JSON.parse(open + buf.toString('utf8', from, to) + close);
  } catch (err) {
    throw new JsonStepsSyntaxError(`${(err as Error).message} (in the slice at bytes ${from}-${to})`);
  }
}
