// JSON values written to a response as they are produced (a big CodeSystem's concepts, paged from the database):
// the REST layer streams them, with the event loop getting turns and the client's pace respected, instead of
// building the whole body in memory and serialising it in one synchronous stretch. Only requests whose context
// allows it get such values (REST's FHIR routes); GraphQL and bots get whole values.

/** A JSON value produced piece by piece. Must be written (chunks()) or closed, never dropped while open. */
export class LazyJson {
  private closed = false;

  constructor(
    private readonly produce: () => AsyncGenerator<string>,
    private readonly onClose?: () => void,
  ) {}

  /** The value's JSON text in pieces; closes the value when done (or abandoned). */
  async *chunks(): AsyncGenerator<string> {
    try {
      yield* this.produce();
    } finally {
      this.close();
    }
  }

  /** Releases what the value holds (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose?.();
  }

  /** A streamed value cannot be serialised synchronously: only a streaming writer may meet one. */
  toJSON(): never {
    throw new Error('A streamed JSON value reached a synchronous serialiser');
  }
}

const holders = new WeakSet<object>();

/** Marks an object or array that holds a LazyJson (directly or in a marked descendant). */
export function holdingLazy<T extends object>(value: T): T {
  holders.add(value);
  return value;
}

/** True for a value marked by holdingLazy. */
export function holdsLazy(value: unknown): value is object {
  return typeof value === 'object' && value !== null && holders.has(value);
}

/** Closes every LazyJson in a marked value (after writing it, or instead). */
export function closeLazy(value: unknown): void {
  if (value instanceof LazyJson) value.close();
  else if (holdsLazy(value)) for (const v of Object.values(value)) closeLazy(v);
}

/** Calls `release` once all of `count` closers returned by the result have been called. */
export function releaseAfter(count: number, release: () => void): () => void {
  let left = count;
  return () => {
    if (--left === 0) release();
  };
}

const streaming = new WeakSet<object>();

/** Lets the operations run with this context return LazyJson values (the caller streams its response). */
export function allowStreaming(ctx: object): void {
  streaming.add(ctx);
}

/** True when the caller of an operation streams its response. */
export function streamingAllowed(ctx: object): boolean {
  return streaming.has(ctx);
}
