// One process at a time opens an embedded data directory: PGlite is single-process, and a second opener (the
// import CLI while the server runs) corrupted the directory for good. The lock is a file created exclusively,
// holding the owner's pid; a lock whose process is gone is stale and taken over.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The data directory is held by another live process. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holderPid: number,
  ) {
    super(
      `The data directory ${dir} is in use by process ${holderPid} (lock file ${path.join(dir, LOCK_NAME)}). ` +
        'Stop that process first (the embedded database is single-process), or use PGLITE_SOCKET_PORT to reach ' +
        "the running server's database.",
    );
    this.name = 'DataDirLockedError';
  }
}

const LOCK_NAME = 'server.lock';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Locks `dir` for this process (creating it if needed); returns the release function. Throws
 * DataDirLockedError, before anything in the directory is touched, when another live process holds it. */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_NAME);
  const content = JSON.stringify({ pid: process.pid, host: os.hostname(), since: new Date().toISOString() });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, content, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      let holder = NaN;
      try {
        holder = Number((JSON.parse(fs.readFileSync(file, 'utf8')) as { pid?: unknown }).pid);
      } catch {
        // Unreadable or half-written: treated as stale below.
      }
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new DataDirLockedError(dir, holder);
      }
      fs.rmSync(file, { force: true });
    }
  }
  const release = () => {
    try {
      if (fs.readFileSync(file, 'utf8') === content) fs.rmSync(file, { force: true });
    } catch {
      // Already gone.
    }
    process.off('exit', release);
  };
  // A process that exits without closing the database still leaves no lock behind.
  process.on('exit', release);
  return release;
}
