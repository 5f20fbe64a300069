// An execution's console output, capped at a byte limit (UTF-8) with a note when it was cut.

/** Collects log lines up to `limit` bytes. */
export class LogBuffer {
  private parts: string[] = [];
  private bytes = 0;
  truncated = false;
  constructor(private readonly limit: number) {}
  append(line: string, truncatedInIsolate: boolean): void {
    if (this.truncated) return;
    const text = `${line}\n`;
    const size = Buffer.byteLength(text);
    if (this.bytes + size > this.limit) {
      const room = this.limit - this.bytes;
      if (room > 0)
        this.parts.push(
          Buffer.from(text)
            .subarray(0, room)
            .toString('utf8')
            .replace(/\uFFFD$/, ''),
        );
      this.bytes = this.limit;
      this.truncated = true;
      return;
    }
    this.parts.push(text);
    this.bytes += size;
    if (truncatedInIsolate) this.truncated = true;
  }
  toString(): string {
    const text = this.parts.join('');
    return this.truncated ? `${text}\n[logs truncated: limit of ${this.limit} bytes reached]\n` : text;
  }
}
