// A last-resort exit that cannot block. process.exit() can wait for ever: isolated-vm parks a thread in its
// out-of-memory callback (a bot whose Map grows to its memoryLimit), and exit waits for that thread. Nothing in
// this process can then run again, so the deadline is kept by a small separate process that SIGKILLs this one.
import { spawn } from 'node:child_process';

const WATCHDOG_SOURCE = `
const [pid, ms] = [Number(process.argv[1]), Number(process.argv[2])];
const deadline = Date.now() + ms;
const tick = setInterval(() => {
  try { process.kill(pid, 0); } catch { process.exit(0); }
  if (Date.now() >= deadline) {
    try { process.kill(pid, 'SIGKILL'); } catch {}
    process.exit(0);
  }
}, 200);
`;

/** Starts a detached watchdog process that SIGKILLs this process `ms` from now unless it has exited by then
 * (the watchdog then ends by itself). */
export function killSelfAfter(ms: number): void {
  const child = spawn(process.execPath, ['-e', WATCHDOG_SOURCE, String(process.pid), String(ms)], {
    detached: true,
    stdio: 'ignore',
  });
  child.on('error', () => undefined);
  child.unref();
}
