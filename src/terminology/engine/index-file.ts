// A code system index as one file: a JSON header (meta, words, the statuses, where each array is) and the typed
// arrays themselves (designations and properties as columns too), 8-byte aligned. Reading it back is one file read
// plus views on its buffer: at a million concepts ~0.1-0.3 s instead of reading a million rows and building
// (several seconds), so the first request after a restart does not wait. The header's `stamp` (the CodeSystem's
// id/versionId/lastUpdated) says which stored version it was built from; a file whose stamp differs is ignored and
// rebuilt.
import fs from 'node:fs';
import path from 'node:path';
import { StringColumn } from './compact.js';
import { CodeSystemIndex, type IndexParts, type TokenIds } from './code-system-index.js';
import type { DesignationKind } from './designation-columns.js';
import { StringTable } from './string-table.js';
import type { CodeSystemMeta } from './types.js';

/** The format: 0001 kept designations and properties as JSON in the header (462 MB and ~15 s to read for SNOMED
 * CT); 0002 keeps them as columns. A file of another format reads as absent, and is rebuilt. */
const MAGIC = 'CSIX0002';
const ARRAYS = [
  'codeBytes',
  'codeOff',
  'codePresent',
  'displayBytes',
  'displayOff',
  'displayPresent',
  'codeSlots',
  'lowerSlots',
  'codeOrder',
  'flags',
  'parentOff',
  'parentIdx',
  'childOff',
  'childIdx',
  'postOff',
  'post',
  'tokOff',
  'tok',
  'dispTokCount',
  'firstOff',
  'firstPost',
  'wordStart',
  'prefixCount',
  'desOff',
  'desKind',
  'desValueBytes',
  'desValueOff',
  'desValuePresent',
  'strBytes',
  'strOff',
  'strPresent',
  'strSlots',
  'propOff',
  'propCode',
  'propKind',
  'propValue',
  'propGroup',
] as const;
type ArrayName = (typeof ARRAYS)[number];
type Arr = Int32Array | Uint16Array | Uint8Array;

interface Header {
  stamp: string;
  meta: CodeSystemMeta;
  size: number;
  words: string[];
  codesAscii: boolean;
  displaysAscii: boolean;
  designationValuesAscii: boolean;
  stringsAscii: boolean;
  statuses: Array<[number, string]>;
  designationKinds: DesignationKind[];
  propertyCodes: string[];
  /** The flags carry FLAG_DEFINITION. */
  definitionFlags?: boolean;
  arrays: Array<{ name: ArrayName; kind: 'i32' | 'u16' | 'u8'; offset: number; length: number }>;
}

function arraysOf(p: IndexParts): Record<ArrayName, Arr | undefined> {
  const d = p.designations;
  const s = p.strings.strings;
  const q = p.properties;
  return {
    codeBytes: p.codes.bytes,
    codeOff: p.codes.off,
    codePresent: p.codes.present,
    displayBytes: p.displays.bytes,
    displayOff: p.displays.off,
    displayPresent: p.displays.present,
    codeSlots: p.codeSlots,
    lowerSlots: p.lowerSlots,
    codeOrder: p.codeOrder,
    flags: p.flags,
    parentOff: p.parentOff,
    parentIdx: p.parentIdx,
    childOff: p.childOff,
    childIdx: p.childIdx,
    postOff: p.postOff,
    post: p.post,
    tokOff: p.tokOff,
    tok: p.tok,
    dispTokCount: p.dispTokCount,
    firstOff: p.firstOff,
    firstPost: p.firstPost,
    wordStart: p.wordStart,
    prefixCount: p.prefixCount,
    desOff: d.off,
    desKind: d.kind,
    desValueBytes: d.value.bytes,
    desValueOff: d.value.off,
    desValuePresent: d.value.present,
    strBytes: s.bytes,
    strOff: s.off,
    strPresent: s.present,
    strSlots: p.strings.slots,
    propOff: q.off,
    propCode: q.code,
    propKind: q.kind,
    propValue: q.value,
    propGroup: q.group,
  };
}

const align8 = (n: number): number => (n + 7) & ~7;

/** The file's bytes, as a list of buffers to write in order. */
export function serializeIndex(index: CodeSystemIndex, stamp: string): Buffer[] {
  const p = index.parts;
  const arrays = arraysOf(p);
  const layout: Header['arrays'] = [];
  let offset = 0;
  for (const name of ARRAYS) {
    const a = arrays[name];
    if (!a) continue;
    const kind = a instanceof Int32Array ? 'i32' : a instanceof Uint16Array ? 'u16' : 'u8';
    layout.push({ name, kind, offset, length: a.length });
    offset = align8(offset + a.byteLength);
  }
  const header: Header = {
    stamp,
    meta: index.meta,
    size: p.size,
    words: p.words,
    codesAscii: p.codes.ascii,
    displaysAscii: p.displays.ascii,
    designationValuesAscii: p.designations.value.ascii,
    stringsAscii: p.strings.strings.ascii,
    statuses: [...p.statuses],
    designationKinds: p.designations.kinds,
    propertyCodes: [...p.propertyCodes],
    definitionFlags: p.definitionFlags,
    arrays: layout,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const pre = Buffer.alloc(12);
  pre.write(MAGIC, 0, 'latin1');
  pre.writeUInt32LE(json.length, 8);
  const padding = align8(12 + json.length) - (12 + json.length);
  const out: Buffer[] = [pre, json];
  if (padding > 0) out.push(Buffer.alloc(padding));
  let written = 0;
  for (const l of layout) {
    const a = arrays[l.name]!;
    if (l.offset > written) out.push(Buffer.alloc(l.offset - written));
    out.push(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
    written = l.offset + a.byteLength;
  }
  return out;
}

/** The index in a file's bytes when its stamp is `stamp`; undefined for another stamp or a file of another format. */
export function deserializeIndex(
  buf: Buffer,
  stamp: string,
  meta?: CodeSystemMeta,
): CodeSystemIndex | undefined {
  if (buf.length < 12 || buf.toString('latin1', 0, 8) !== MAGIC) return undefined;
  const jsonLen = buf.readUInt32LE(8);
  const header = JSON.parse(buf.toString('utf8', 12, 12 + jsonLen)) as Header;
  if (header.stamp !== stamp) return undefined;
  // Views need an 8-byte-aligned base: a pooled Buffer may not be.
  if (buf.byteOffset % 8 !== 0) buf = Buffer.from(buf);
  const base = buf.byteOffset + align8(12 + jsonLen);
  const got = {} as Record<ArrayName, Arr | undefined>;
  for (const l of header.arrays) {
    got[l.name] =
      l.kind === 'i32'
        ? new Int32Array(buf.buffer, base + l.offset, l.length)
        : l.kind === 'u16'
          ? new Uint16Array(buf.buffer, base + l.offset, l.length)
          : new Uint8Array(buf.buffer, base + l.offset, l.length);
  }
  const i32 = (n: ArrayName): Int32Array => got[n] as Int32Array;
  const u8 = (n: ArrayName): Uint8Array => got[n] as Uint8Array;
  const parts: IndexParts = {
    size: header.size,
    codes: new StringColumn(u8('codeBytes'), i32('codeOff'), u8('codePresent'), header.codesAscii),
    displays: new StringColumn(
      u8('displayBytes'),
      i32('displayOff'),
      u8('displayPresent'),
      header.displaysAscii,
    ),
    codeSlots: i32('codeSlots'),
    lowerSlots: got.lowerSlots as Int32Array | undefined,
    codeOrder: got.codeOrder as Int32Array | undefined,
    definitionFlags: header.definitionFlags === true,
    flags: u8('flags'),
    parentOff: i32('parentOff'),
    parentIdx: i32('parentIdx'),
    childOff: i32('childOff'),
    childIdx: i32('childIdx'),
    words: header.words,
    postOff: i32('postOff'),
    post: i32('post'),
    tokOff: i32('tokOff'),
    tok: got.tok as TokenIds,
    dispTokCount: u8('dispTokCount'),
    firstOff: i32('firstOff'),
    firstPost: i32('firstPost'),
    wordStart: i32('wordStart'),
    prefixCount: i32('prefixCount'),
    statuses: new Map(header.statuses),
    designations: {
      off: i32('desOff'),
      kind: got.desKind as Uint16Array | Int32Array,
      value: new StringColumn(
        u8('desValueBytes'),
        i32('desValueOff'),
        u8('desValuePresent'),
        header.designationValuesAscii,
      ),
      kinds: header.designationKinds,
    },
    properties: {
      off: i32('propOff'),
      code: i32('propCode'),
      kind: u8('propKind'),
      value: i32('propValue'),
      group: got.propGroup as Uint8Array | Int32Array,
    },
    strings: new StringTable(
      new StringColumn(u8('strBytes'), i32('strOff'), u8('strPresent'), header.stringsAscii),
      i32('strSlots'),
    ),
    propertyCodes: new Set(header.propertyCodes),
  };
  return new CodeSystemIndex(meta ?? header.meta, parts);
}

/** Writes the index file atomically (temporary file, then rename). */
export async function writeIndexFile(file: string, index: CodeSystemIndex, stamp: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fh = await fs.promises.open(tmp, 'w');
  try {
    for (const b of serializeIndex(index, stamp)) await fh.write(b);
  } finally {
    await fh.close();
  }
  await fs.promises.rename(tmp, file);
}

/** Reads an index file; undefined when it is absent, of another stamp or unreadable. */
export async function readIndexFile(
  file: string,
  stamp: string,
  meta?: CodeSystemMeta,
): Promise<CodeSystemIndex | undefined> {
  let buf: Buffer;
  try {
    buf = await fs.promises.readFile(file);
  } catch {
    return undefined;
  }
  try {
    return deserializeIndex(buf, stamp, meta);
  } catch {
    return undefined;
  }
}
