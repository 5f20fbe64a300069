// isolated-vm for the Node version that runs the server. isolated-vm is a native addon bound to one V8: 5.0.4
// builds on Node 20 and 22 but not on 24 (V8 13.6's headers need C++20 and drop APIs it uses); 6.x supports 22 and
// 24 (with prebuilt binaries) but not 20. package.json therefore lists both as optional dependencies: `isolated-vm`
// (6.x; npm skips it on Node 20 because of its `engines`) and `isolated-vm-5` (`npm:isolated-vm@5.0.4`; on Node 24
// its build fails and npm drops it, as it may for an optional package). Their JavaScript API is the same (the two
// releases ship an identical isolated-vm.d.ts), so the sandbox imports this module as it would the package:
// `import ivm from './isolated-vm.js'` (also for type-only imports). Never import 'isolated-vm' itself: Node 20 has
// no such package (CI's type-check, on Node 20, fails on it).
import { createRequire } from 'node:module';
// Types only (tsconfig `paths`: the .d.ts of whichever isolated-vm is installed).
import type IsolatedVM from 'isolated-vm-types';

const require = createRequire(import.meta.url);

/** The Node versions the sandbox runs on, as README and package.json `engines` state them. */
export const SUPPORTED_NODE = '20.19+, 22.12+ and 24';

/** The packages to try for a Node major version, best first: 6.x where it exists, then 5.0.4. */
export function isolatedVmCandidates(nodeMajor: number): string[] {
  return nodeMajor >= 22 ? ['isolated-vm', 'isolated-vm-5'] : ['isolated-vm-5'];
}

/** Requires the first candidate that loads for this Node; else throws one error naming each failure and the fix. */
export function loadIsolatedVm(
  candidates = isolatedVmCandidates(Number(process.versions.node.split('.')[0])),
): typeof IsolatedVM {
  const failures: string[] = [];
  for (const name of candidates) {
    try {
      return require(name) as typeof IsolatedVM;
    } catch (err) {
      // A missing package's message ends in its require stack; a wrong build's spans lines: keep one line.
      const message = err instanceof Error ? err.message.split('\nRequire stack')[0] : String(err);
      failures.push(`${name}: ${message.replace(/\s+/g, ' ').trim()}`);
    }
  }
  throw new Error(
    `The bot sandbox needs isolated-vm built for Node ${process.version} (module ABI ` +
      `${process.versions.modules}), and none loaded (${failures.join('; ')}). Supported Node versions are ` +
      `${SUPPORTED_NODE}: run \`npm install\` again with the Node that runs the server (it builds or picks the ` +
      `isolated-vm for that version).`,
  );
}

const ivm = loadIsolatedVm();

// The package's classes as types beside the value (`ivm.Isolate` names the instance type, as with
// `import ivm from 'isolated-vm'`). A namespace holding only types merges with the constant of the same name.
/* eslint-disable @typescript-eslint/no-namespace, @typescript-eslint/no-explicit-any -- the namespace mirrors
   isolated-vm's own declarations, generic defaults (any) included */
declare namespace ivm {
  export type Isolate = IsolatedVM.Isolate;
  export type IsolateOptions = IsolatedVM.IsolateOptions;
  export type HeapStatistics = IsolatedVM.HeapStatistics;
  export type Context = IsolatedVM.Context;
  export type Script = IsolatedVM.Script;
  export type Module = IsolatedVM.Module;
  export type Reference<T = any> = IsolatedVM.Reference<T>;
  export type ExternalCopy<T = any> = IsolatedVM.ExternalCopy<T>;
  export type Callback<T extends (...args: any[]) => any = any> = IsolatedVM.Callback<T>;
  export type Transferable = IsolatedVM.Transferable;
}
/* eslint-enable @typescript-eslint/no-namespace, @typescript-eslint/no-explicit-any */

export default ivm;
