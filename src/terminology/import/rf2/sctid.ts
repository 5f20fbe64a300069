// SNOMED CT identifiers (SCTIDs): 6 to 18 digits, no leading zero, a partition identifier in the two digits before
// the check digit (its second digit: 0 concept, 1 description, 2 relationship), and a Verhoeff check digit. Checked
// on the bytes of a release line, without making a string.

const D = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
  [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
  [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
  [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
  [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
  [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
  [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
].flat();
const P = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
].flat();

/** What an SCTID identifies (the partition identifier's second digit). */
export const enum Partition {
  Concept = 0,
  Description = 1,
  Relationship = 2,
}

/** Why bytes [start, end) are not an SCTID of the partition (any partition when `partition` is undefined), or
 * undefined when they are one. */
export function sctidProblem(
  buf: Uint8Array,
  start: number,
  end: number,
  partition?: Partition,
): string | undefined {
  const len = end - start;
  if (len < 6 || len > 18) return 'is not an SCTID (6 to 18 digits)';
  let c = 0;
  for (let i = 0; i < len; i++) {
    const digit = buf[end - 1 - i] - 48;
    if (digit < 0 || digit > 9) return 'is not an SCTID (digits only)';
    c = D[c * 10 + P[(i % 8) * 10 + digit]];
  }
  if (buf[start] === 48) return 'is not an SCTID (leading zero)';
  if (c !== 0) return 'is not an SCTID (wrong check digit)';
  const part = buf[end - 2] - 48;
  if (part > 2 || buf[end - 3] - 48 > 1) return `is not an SCTID (partition ${buf[end - 3] - 48}${part})`;
  if (partition !== undefined && part !== partition)
    return `is not a ${['concept', 'description', 'relationship'][partition]} SCTID (partition ${buf[end - 3] - 48}${part})`;
  return undefined;
}

/** Whether a string is a valid SCTID (of the partition, when given). */
export function isSctid(id: string, partition?: Partition): boolean {
  return sctidProblem(Buffer.from(id, 'latin1'), 0, id.length, partition) === undefined;
}
