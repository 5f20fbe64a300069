// parseJsonInSteps (big request bodies) must give what JSON.parse gives, and refuse what it refuses: checked on
// generated documents with tiny slice sizes, so that every container is built element by element at some depth.
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseJsonInSteps, JsonStepsSyntaxError } from '../../src/core/json-in-steps.js';

const limits = { tooDeep: () => new Error('too deep'), nul: () => new Error('nul') };
const tiny = { batch: 7, promote: 11, scanStep: 5 };

/** A deterministic pseudo-random generator (the documents are the same on every run). */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomValue(r: () => number, depth: number): unknown {
  const k = r();
  if (depth > 4 || k < 0.35) {
    const leaves = [
      () => Math.floor(r() * 1000) - 500,
      () => r() * 10,
      () =>
        ['a', 'é ü', 'with "quotes"', 'back\\slash', 'tab\there', '😀', '', ',:[]{}'][Math.floor(r() * 8)],
      () => null,
      () => r() < 0.5,
    ];
    return leaves[Math.floor(r() * leaves.length)]();
  }
  const n = Math.floor(r() * 6);
  if (k < 0.65) return Array.from({ length: n }, () => randomValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = 0; i < n; i++)
    o[['a', 'b', 'c', 'key with space', '__proto__', 'constructor'][Math.floor(r() * 6)]] = randomValue(
      r,
      depth + 1,
    );
  return o;
}

async function same(text: string): Promise<void> {
  let expected: unknown;
  let expectedErr = false;
  try {
    expected = JSON.parse(text);
  } catch {
    expectedErr = true;
  }
  for (const sizes of [
    tiny,
    { batch: 1, promote: 1, scanStep: 1 },
    { batch: 64, promote: 40, scanStep: 16 },
  ]) {
    let got: unknown;
    let err: unknown;
    try {
      got = await parseJsonInSteps(Buffer.from(text), 256, limits, sizes);
    } catch (e) {
      err = e;
    }
    if (expectedErr) {
      expect(err, `${text} should be refused`).toBeInstanceOf(JsonStepsSyntaxError);
    } else {
      expect(err, `${text}: ${String(err)}`).toBeUndefined();
      // Own keys in the same order, __proto__ as an own key, prototypes untouched. (Node's comparison: vitest's
      // toStrictEqual compares `constructor` properties by identity, and `constructor` is a key here.)
      expect(JSON.stringify(got)).toBe(JSON.stringify(expected));
      expect(isDeepStrictEqual(got, expected), text).toBe(true);
    }
  }
}

describe('parseJsonInSteps', () => {
  it('gives what JSON.parse gives on 400 generated documents, with and without whitespace', async () => {
    const r = rng(42);
    for (let n = 0; n < 400; n++) {
      const v = randomValue(r, 0);
      await same(JSON.stringify(v));
      await same(JSON.stringify(v, null, n % 3));
    }
  });

  it('handles the edge cases: duplicate keys, __proto__, empty containers, deep nesting, unicode', async () => {
    for (const text of [
      '{"a":1,"b":{"c":[1,2,3,4,5,6,7,8]},"a":{"x":[10,20,30,40]}}',
      '{"__proto__":{"polluted":true},"x":[1,2,3,4,5,6,7,8,9,10]}',
      '[[],{},[{}],{"a":[]},[[[[[[1]]]]]]]',
      ' \n [ "😀😀😀😀😀😀", "é", "\\u00e9\\ud83d\\ude00" , {"k":"\\"]},{"} ] \t',
      '"just a string"',
      '12345',
      '[' + Array.from({ length: 300 }, (_, i) => `{"code":"c${i}","display":"D ${i}"}`).join(',') + ']',
    ]) {
      await same(text);
    }
    const proto = (await parseJsonInSteps(
      Buffer.from('{"__proto__":{"polluted":true},"pad":[1,2,3,4,5,6,7,8,9]}'),
      256,
      limits,
      tiny,
    )) as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.hasOwn(proto, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses what JSON.parse refuses', async () => {
    for (const text of [
      '[1,2,]',
      '[,1,2,3,4,5,6,7,8]',
      '[1,,2,3,4,5,6,7,8]',
      '{"a":[1,2,3,4,5,6,7,8,9,10],}',
      '{"a" [1,2,3,4,5,6,7,8,9,10]}',
      '{[1,2,3,4,5,6,7,8,9,10]:1}',
      '[[1,2,3,4,5,6,7,8,9,10] 5]',
      '[[1,2,3,4,5,6,7,8,9,10]}',
      '{"a":[1,2,3,4,5,6,7,8,9,10]] ',
      '[1,2,3,4,5,6,7,8,9,10] x',
      '[1,2,3,4,5,6,7,8,9,10',
      '["unterminated',
      '[{"a":1},{"b":2},{"c":3},{"d":4}]]',
      '',
    ]) {
      await same(text);
    }
  });

  it('checks nesting depth and \\u0000 as checkJsonBytes does', async () => {
    await expect(
      parseJsonInSteps(Buffer.from('['.repeat(10) + ']'.repeat(10)), 9, limits, tiny),
    ).rejects.toThrow('too deep');
    await expect(
      parseJsonInSteps(Buffer.from('{"a":"x\\u0000y","b":[1,2,3,4,5,6,7,8]}'), 9, limits, tiny),
    ).rejects.toThrow('nul');
    // Brackets and escapes inside strings do not count.
    await same('{"a":"[[[[[[[[[[[[","b":"\\\\u0000 is fine as text"}');
  });
});
