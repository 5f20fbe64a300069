// ECL results, least recently used first out: per index (its cacheKey) and canonical expression text.
import type { Bitset } from './bitset.js';

const MAX_ENTRIES = 128;
const MAX_BYTES = 32 * 1024 * 1024;

export class EclResultCache {
  private readonly entries = new Map<string, Bitset>();
  private bytes = 0;

  get(key: string): Bitset | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: Bitset): void {
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.byteLength;
      this.entries.delete(key);
    }
    if (value.byteLength > MAX_BYTES) return;
    this.entries.set(key, value);
    this.bytes += value.byteLength;
    for (const [k, v] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && this.bytes <= MAX_BYTES) break;
      this.entries.delete(k);
      this.bytes -= v.byteLength;
    }
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
