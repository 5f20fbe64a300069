// Text normalisation for filters: lowercase, NFD, combining marks stripped; words split on anything that is
// neither a letter nor a digit. Display words and filter words go through the same function.

const COMBINING_MARKS = /\p{M}+/gu;
const NON_WORD = /[^\p{L}\p{N}]+/u;
const NON_WORD_ASCII = /[^a-z0-9]+/;

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 127) return false;
  }
  return true;
}

/** Lowercase, accent-free form of s. */
export function normalizeText(s: string): string {
  const lower = s.toLowerCase();
  return isAscii(lower) ? lower : lower.normalize('NFD').replace(COMBINING_MARKS, '');
}

/** The normalised words of s, in order (duplicates kept). */
export function tokenize(s: string): string[] {
  const lower = s.toLowerCase();
  const parts = isAscii(lower)
    ? lower.split(NON_WORD_ASCII)
    : lower.normalize('NFD').replace(COMBINING_MARKS, '').split(NON_WORD);
  let empty = 0;
  for (const p of parts) if (p === '') empty++;
  return empty === 0 ? parts : parts.filter((p) => p !== '');
}
