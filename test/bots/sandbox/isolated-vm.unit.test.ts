// The sandbox's isolated-vm loader (src/bots/sandbox/isolated-vm.ts): which build serves which Node, and what an
// operator reads when none loads (a Node without a matching build, e.g. after switching versions).
import { describe, expect, it } from 'vitest';
import ivm, { isolatedVmCandidates, loadIsolatedVm } from '../../../src/bots/sandbox/isolated-vm.js';

describe('isolated-vm loader', () => {
  it('loads a working isolated-vm on the Node running the tests', async () => {
    const isolate = new ivm.Isolate({ memoryLimit: 16 });
    try {
      const context = await isolate.createContext();
      expect(await context.eval('6 * 7')).toBe(42);
    } finally {
      isolate.dispose();
    }
  });

  it('tries 6.x then 5.0.4 on Node 22 and later, and only 5.0.4 on Node 20', () => {
    expect(isolatedVmCandidates(20)).toEqual(['isolated-vm-5']);
    expect(isolatedVmCandidates(22)).toEqual(['isolated-vm', 'isolated-vm-5']);
    expect(isolatedVmCandidates(24)).toEqual(['isolated-vm', 'isolated-vm-5']);
  });

  it('names each failed package, this Node and the fix when nothing loads', () => {
    let message = '';
    try {
      loadIsolatedVm(['isolated-vm-not-installed-a', 'isolated-vm-not-installed-b']);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(`Node ${process.version} (module ABI ${process.versions.modules})`);
    expect(message).toMatch(/isolated-vm-not-installed-a: Cannot find module 'isolated-vm-not-installed-a'/);
    expect(message).toMatch(/isolated-vm-not-installed-b: Cannot find module/);
    expect(message).toContain('20.19+, 22.12+ and 24');
    expect(message).toContain('run `npm install` again with the Node that runs the server');
    // One line: no require stack, no absolute paths of the test files.
    expect(message).not.toMatch(/\n|Require stack/);
  });
});
