// The V8 settings of the server process (issue 27; docs/performance.md, Start and memory), made before its modules
// load:
// - One background task compiles WebAssembly. PGlite's PostgreSQL tiers its hot functions up to TurboFan on V8's
//   worker threads as it starts; each job holds megabytes of compiler memory, freed when it ends but kept by glibc's
//   allocator (V8's malloc peak 75-90 MiB at a start with a task per core; ~30 MiB with one). The main thread runs
//   PGlite, so more tasks only finish the tier-up sooner on a machine with cores to spare.
// - The young generation does not grow during the start. Loading the modules is a burst of long-lived allocation
//   that V8 reads as a reason to grow it to its 32 MiB maximum, where it stays until the memory reducer runs (~16 s
//   after an idle start). Growth is allowed again once the server listens, so load sizes it as before.
// - The old generation may grow to 1.5 times what the last full collection kept, not V8's dynamic factor (up to 4
//   for a heap limit as large as Node's): under load a request's few promoted objects made the old generation grow
//   from ~45 MiB live to 120-130 MiB before each full collection, RSS under the quick bench from ~230 to 480-500 MiB
//   (350-360 with 1.5). A full collection is concurrent marking and a few milliseconds of pause, now every few
//   seconds under load instead of every ten.
// Each is read by V8 when it is used, so setting it at run time takes effect; an operator's own value on the command
// line is left alone (Node refuses these flags in NODE_OPTIONS).
import v8 from 'node:v8';

const TASKS_FLAG = '--wasm-num-compilation-tasks';
const GROWTH_FLAG = '--semi-space-growth-factor';
const OLD_GROWTH_FLAG = '--heap-growing-percent';
/** The old generation's growth over the live size after a full collection, in percent. */
const OLD_GROWTH_PERCENT = 50;
/** V8's default growth factor (Node 20 to 24). */
const DEFAULT_GROWTH = 2;

/** True when the operator set the flag for this process on the command line. */
function operatorSet(flag: string, argv: readonly string[]): boolean {
  const name = flag.slice(2);
  // V8 accepts both spellings of a flag's words.
  const spellings = [name, name.replace(/-/g, '_')];
  return argv.some((a) => spellings.some((s) => a === `--${s}` || a.startsWith(`--${s}=`)));
}

/** Applies the settings; returns the function that allows the young generation to grow again (call it once the
 * server listens). */
export function applyHeapSettings(argv: readonly string[] = process.execArgv): () => void {
  if (!operatorSet(TASKS_FLAG, argv)) v8.setFlagsFromString(`${TASKS_FLAG}=1`);
  if (!operatorSet(OLD_GROWTH_FLAG, argv)) v8.setFlagsFromString(`${OLD_GROWTH_FLAG}=${OLD_GROWTH_PERCENT}`);
  if (operatorSet(GROWTH_FLAG, argv)) return () => {};
  v8.setFlagsFromString(`${GROWTH_FLAG}=1`);
  return () => v8.setFlagsFromString(`${GROWTH_FLAG}=${DEFAULT_GROWTH}`);
}
