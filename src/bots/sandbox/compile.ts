// Bot source -> the CommonJS the isolate runs. JS and TS are both accepted (TS is a superset for esbuild's
// purposes); ESM `export async function handler` and CommonJS `exports.handler` / `module.exports.handler` both work.
// esbuild is loaded on the first compile (a deploy), not at every start (~40 ms).
const esbuild = () => import('esbuild');

/** A syntax/transform error in bot source. `message` is `filename:line:column: text` (both 1-based). */
export class CompileError extends Error {
  readonly line: number;
  readonly column: number;
  readonly filename: string;
  constructor(filename: string, line: number, column: number, text: string) {
    super(`${filename}:${line}:${column}: ${text}`);
    this.name = 'CompileError';
    this.filename = filename;
    this.line = line;
    this.column = column;
  }
}

interface EsbuildMessage {
  text: string;
  location: { line: number; column: number } | null;
}

/** Compiles bot source (TS or JS, ESM or CommonJS) to the CommonJS the isolate runs; CompileError names the place. */
export async function compileBot(source: string, filename = 'bot.ts'): Promise<string> {
  const { transform } = await esbuild();
  try {
    const result = await transform(source, {
      loader: 'ts',
      format: 'cjs',
      target: 'es2022',
      sourcefile: filename,
      platform: 'neutral',
      logLevel: 'silent',
      // import('x') becomes Promise.resolve().then(() => require('x')), i.e. goes through the sandbox's require.
      supported: { 'dynamic-import': false },
    });
    return result.code;
  } catch (err) {
    const errors = (err as { errors?: EsbuildMessage[] }).errors;
    const first = Array.isArray(errors) ? errors[0] : undefined;
    if (first) {
      const line = first.location?.line ?? 1;
      const column = (first.location?.column ?? 0) + 1; // esbuild columns are 0-based
      throw new CompileError(filename, line, column, first.text);
    }
    throw new CompileError(filename, 1, 1, err instanceof Error ? err.message : String(err));
  }
}
