// Durability of the embedded database (issue 11 item 13). PGlite runs PostgreSQL in WebAssembly over Emscripten's
// NODEFS, which writes through to real files but treats fsync as a no-op: its stream operations have no `fsync`, so
// fsync() returns 0 without a system call, and fdatasync() is a no-op outright. PostgreSQL's own syncs (the WAL at
// every commit, data files at checkpoints, directories after creating files) therefore never reached the disk.
// Here NODEFS gets a real `fsync` stream operation, and PostgreSQL is told to sync its WAL with fsync()
// (wal_sync_method=fsync; the Linux default fdatasync cannot be hooked). PostgreSQL still decides what to sync and
// when; a commit is acknowledged only after its WAL record's sync returned, as on a server.
import fs from 'node:fs';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import type { PGlite } from '@electric-sql/pglite';

/** The emscripten parts we touch: NODEFS's shared stream operations and FS.isDir. */
interface EmscriptenModule {
  NODEFS: { stream_ops: Record<string, unknown> };
  FS: { isDir(mode: number): boolean; ErrnoError: new (errno: number) => Error };
}

/** An open NODEFS stream: `nfd` is the real file descriptor. */
interface NodeStream {
  nfd?: number;
  node: { mode: number };
}

/** What the embedded database did to make writes durable (shown in /healthz). */
export interface SyncStats {
  /** fsync on (PGLITE_FSYNC). */
  enabled: boolean;
  /** Real fsync/fdatasync system calls made for PostgreSQL since the start. */
  calls: number;
  /** Total milliseconds spent in them. */
  totalMs: number;
}

/** PostgreSQL start parameters with fsync on: PGlite's defaults without -F, syncing the WAL with fsync(). */
export function durableStartParams(defaults: readonly string[]): string[] {
  return [...defaults.filter((p) => p !== '-F'), '-c', 'wal_sync_method=fsync'];
}

/** NODEFS whose fsync reaches the disk: fdatasync for files (PostgreSQL needs data and size, not timestamps), fsync
 * for directories (file creations and renames). */
export class SyncingNodeFS extends NodeFS {
  readonly stats: SyncStats = { enabled: true, calls: 0, totalMs: 0 };

  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]) {
    const result = await super.init(pg, opts);
    const preRun = result.emscriptenOpts.preRun ?? [];
    const stats = this.stats;
    result.emscriptenOpts.preRun = [
      ...(Array.isArray(preRun) ? preRun : [preRun]),
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- emscripten's Module type does not declare NODEFS
      (mod: any) => {
        const m = mod as EmscriptenModule;
        m.NODEFS.stream_ops.fsync = (stream: NodeStream) => {
          if (stream.nfd === undefined) return 0;
          const t0 = performance.now();
          try {
            if (m.FS.isDir(stream.node.mode)) fs.fsyncSync(stream.nfd);
            else fs.fdatasyncSync(stream.nfd);
          } catch {
            // EIO to PostgreSQL, which treats a failed sync as fatal (PANIC), as it must: the data may be lost.
            throw new m.FS.ErrnoError(29);
          }
          stats.calls++;
          stats.totalMs += performance.now() - t0;
          return 0;
        };
      },
    ];
    return result;
  }
}
