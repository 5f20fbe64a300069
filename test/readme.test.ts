// The README's shell blocks run as written (a doc test): every ```sh/```bash block, in order, in one bash session
// (variables and functions carry over from block to block, as in a user's terminal), against a freshly started server with the
// default credentials the README shows. A block runs with `set -euo pipefail`: a failing command, a curl that
// cannot reach its URL (a space in it, a line ending in `...`) or an unset variable fails the test, and so does
// output carrying an OperationOutcome error or an OAuth2 error. A block preceded by
// `<!-- doc-test: skip (why) -->` is skipped knowingly (installs, long runs, a second process on the database);
// `<!-- doc-test: env -->` marks the block that defines BASE, which the test points at its own server instead.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from './helpers/processes.js';
import { dropSchema, newSchemaName, onPostgres } from './helpers/server.js';

const ROOT = path.resolve(import.meta.dirname, '..');

interface Block {
  line: number;
  code: string;
  marker?: { kind: 'skip' | 'env'; reason: string };
}

/** The README's sh/bash blocks with their start line and the doc-test marker on the line before, if any. */
export function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(sh|bash)\s*$/.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    const prev =
      lines
        .slice(0, i)
        .reverse()
        .find((l) => l.trim() !== '') ?? '';
    const m = /^<!-- doc-test: (skip|env)(?: \((.+)\))? -->$/.exec(prev.trim());
    blocks.push({
      line: i + 1,
      code: lines.slice(i + 1, end).join('\n'),
      marker: m ? { kind: m[1] as 'skip' | 'env', reason: m[2] ?? '' } : undefined,
    });
    i = end;
  }
  return blocks;
}

const blocks = shellBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
let server: ServerProcess;
const schema = onPostgres ? newSchemaName() : undefined;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-'));
const stateFile = path.join(work, 'state.sh');

beforeAll(async () => {
  // As a user's first start: the default credentials the README's examples use, and the core definitions.
  server = await startServerProcess({
    databaseUrl: process.env.TEST_DATABASE_URL,
    schema,
    env: {
      ADMIN_EMAIL: 'admin@example.com',
      ADMIN_PASSWORD: 'medplum_admin',
      CLIENT_ID: 'f54370de-eaf3-4d81-a17e-24860f667912',
      CLIENT_SECRET: 'change-me-client-secret',
      // A fresh start loads the FHIR R4 core value sets (the examples expand administrative-gender).
      LOAD_CORE_TERMINOLOGY: 'true',
    },
  });
  fs.writeFileSync(stateFile, `export BASE=${server.base.replace(/\/$/, '')}\n`);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await dropSchema(schema);
  fs.rmSync(work, { recursive: true, force: true });
});

/** Runs one block in bash after the state the earlier blocks left; saves the state it leaves. */
function run(block: Block): { status: number | null; output: string } {
  const script = [
    'set -a', // every assignment is exported, so `export -p` below carries it to the next block
    `source ${JSON.stringify(stateFile)}`,
    'set -euo pipefail',
    block.code,
    'set +u',
    // Readonly shell variables can't be re-assigned by the next block's `source`.
    `export -p | grep -v '^declare -[a-zA-Z]*r' > ${JSON.stringify(stateFile)}`,
    `declare -f >> ${JSON.stringify(stateFile)}`, // and functions (sign_in)
  ].join('\n');
  const r = spawnSync('bash', ['-c', script], {
    cwd: work,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('README shell blocks', () => {
  it('every block is either run or marked, with a reason, as skipped', () => {
    expect(blocks.length).toBeGreaterThan(5);
    for (const b of blocks.filter((x) => x.marker?.kind === 'skip')) {
      expect(b.marker?.reason, `README.md:${b.line} skip marker without a reason`).not.toBe('');
    }
    // Exactly one block defines BASE, and the ones the test runs do not redefine it (one meaning everywhere).
    expect(blocks.filter((b) => b.marker?.kind === 'env')).toHaveLength(1);
    for (const b of blocks.filter((x) => !x.marker)) {
      expect(b.code, `README.md:${b.line} sets BASE`).not.toMatch(/^\s*(export\s+)?BASE=/m);
    }
  });

  for (const block of blocks) {
    const title = `README.md:${block.line}: ${block.code.split('\n').find((l) => l.trim() && !l.startsWith('#'))}`;
    it.skipIf(Boolean(block.marker))(title, () => {
      const { status, output } = run(block);
      expect(output, 'OperationOutcome error').not.toMatch(/"severity":"(error|fatal)"/);
      expect(output, 'OAuth2 error').not.toMatch(
        /"error":"(invalid_|unauthorized|unsupported|access_denied)/,
      );
      expect(status, output).toBe(0);
    });
  }
});
