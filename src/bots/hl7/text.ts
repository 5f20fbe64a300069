// Plain-text helpers of the HL7 v2 model. Like every file of the model they run on the host and inside the bot
// isolate (plain ECMAScript: no Node or Web globals); they are not published to bots.

/** Splits on a separator; an empty one (missing from a short MSH-2) splits nothing. */
export function splitOn(text: string, separator: string): string[] {
  return separator === '' ? [text] : text.split(separator);
}

/** A non-negative integer index. */
export function isIndex(value: number): boolean {
  return Number.isInteger(value) && value >= 0;
}

function latin1(bytes: number[]): string {
  let out = '';
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

/** Decodes bytes as UTF-8 when they are valid UTF-8, otherwise as ISO-8859-1 (no TextDecoder in the isolate). */
export function decodeBytes(bytes: number[]): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i];
    if (lead < 0x80) {
      out += String.fromCharCode(lead);
      i++;
      continue;
    }
    let extra: number;
    let cp: number;
    if (lead >= 0xc2 && lead <= 0xdf) {
      extra = 1;
      cp = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      extra = 2;
      cp = lead & 0x0f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      extra = 3;
      cp = lead & 0x07;
    } else {
      return latin1(bytes);
    }
    if (i + extra >= bytes.length) return latin1(bytes);
    for (let k = 1; k <= extra; k++) {
      const next = bytes[i + k];
      if ((next & 0xc0) !== 0x80) return latin1(bytes);
      cp = (cp << 6) | (next & 0x3f);
    }
    const overlong = (extra === 2 && cp < 0x800) || (extra === 3 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return latin1(bytes);
    out += String.fromCodePoint(cp);
    i += extra + 1;
  }
  return out;
}
