// The docs run as written (a doc test). Every ```sh/```bash block of the pages in PAGES runs, page after page in that
// order, in one bash session (variables and functions carry over from block to block and from page to page, as in a
// user's terminal), against a freshly started server with the default credentials the README shows. A block runs
// with `set -euo pipefail`: a failing command, a curl that cannot reach its URL or an unset variable fails it. Also:
// - Statuses. curl runs through a wrapper that records the status of every request. Each must be below 400, unless
//   its command is annotated `# -> 401` (at the end of the command's last line, or alone on the line right after
//   it): then the command's last request must answer exactly that. `# -> ` followed by anything but a status is
//   prose and not checked. An annotation whose line never runs fails, as does a bare `# 401` after a command
//   (write `# -> 401`).
// - GraphQL answers. The wrapper also reads each answer's body: an errors-only GraphQL answer (`{"errors": ...}`
//   or `{"data": null, "errors": ...}`, which yoga sends with 200) fails the block wherever its output goes
//   (piped through node, into a variable), unless the block is marked expect-errors.
// - Error bodies. Output carrying an OperationOutcome error, an OAuth2 error or a GraphQL `"errors"` answer fails
//   the block, unless the block is preceded by `<!-- doc-test: expect-errors (why) -->`.
// - `<!-- doc-test: skip (why) -->` skips a block knowingly (installs, long runs, a second process on the embedded
//   database); `<!-- doc-test: env -->` marks the one block that defines BASE, which the test points at its own
//   server instead.
// It also checks that PAGES names every page, and that every relative link of every page leads to a file, a
// folder or a heading that exists.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServerProcess } from './helpers/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The pages, in the order their blocks run: the README's first session first (it defines BASE, sign_in and
 * TOKEN), then the pages that use them. A new page goes here (the test fails until it does). */
export const PAGES = [
  'README.md',
  'docs/sessions-and-security.md',
  'docs/terminology.md',
  'docs/bots.md',
  'docs/graphql.md',
  'docs/standards.md',
  'docs/operations.md',
  'docs/configuration.md',
  'docs/performance.md',
  'docs/architecture.md',
  'CONTRIBUTING.md',
];

type MarkerKind = 'skip' | 'env' | 'expect-errors';

interface Block {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  marker?: { kind: MarkerKind; reason: string };
}

/** A page's sh/bash blocks with their start line and the doc-test marker on the line before, if any. */
export function shellBlocks(page: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s*$/.test(lines[i])) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    const prev =
      lines
        .slice(0, i)
        .reverse()
        .find((l) => l.trim() !== '') ?? '';
    const m = /^<!-- doc-test: (skip|env|expect-errors)(?: \((.+)\))? -->$/.exec(prev.trim());
    blocks.push({
      page,
      line: i + 1,
      code: lines.slice(i + 1, end).join('\n'),
      marker: m ? { kind: m[1] as MarkerKind, reason: m[2] ?? '' } : undefined,
    });
    i = end;
  }
  return blocks;
}

/** A status annotation alone on its line (it checks the command before it). */
const ALONE = /^\s*#\s*->\s*(\d{3})\b/;
/** A status annotation at the end of a command's last line. */
const TRAILING = /^(.*\S)\s+#\s*->\s*(\d{3})\b.*$/;

/** The block with each status annotation turned into a check of the last request (`__doc_expect STATUS LINE`),
 * line for line, so bash's line numbers stay the block's. */
export function instrument(code: string): string {
  return code
    .split('\n')
    .map((line, i) => {
      const alone = ALONE.exec(line);
      if (alone) return `__doc_expect ${alone[1]} ${i + 1}`;
      const trailing = TRAILING.exec(line);
      if (trailing && !trailing[1].trimStart().startsWith('#'))
        return `${trailing[1]}; __doc_expect ${trailing[2]} ${i + 1}`;
      return line;
    })
    .join('\n');
}

/** A status written as a bare comment after a command (`curl ... # 401`): ambiguous, so refused. */
const BARE = /^(.*\S)\s+#\s*(\d{3})\s*$/;

/** The block lines (1-based) that carry a status annotation, and the problems of bare status comments. */
export function annotations(code: string): { lines: number[]; problems: string[] } {
  const lines: number[] = [];
  const problems: string[] = [];
  code.split('\n').forEach((line, i) => {
    const trailing = TRAILING.exec(line);
    if (ALONE.test(line) || (trailing && !trailing[1].trimStart().startsWith('#'))) lines.push(i + 1);
    const bare = BARE.exec(line);
    if (bare && !bare[1].trimStart().startsWith('#'))
      problems.push(
        `line ${i + 1}: write the status as \`# -> ${bare[2]}\` (a bare \`# ${bare[2]}\` is not checked)`,
      );
  });
  return { lines, problems };
}

/** What the wrapper and the checks wrote, in order: `status <code> <script line>`, `graphql-errors <script line>`
 * and `expect <code> <block line>`. `annotated` lists the block's annotation lines: each must have run; an
 * errors-only GraphQL answer is a problem unless `allowErrors`. */
export function statusProblems(
  log: string,
  blockLine: (scriptLine: number) => string,
  opts: { annotated?: number[]; allowErrors?: boolean } = {},
): string[] {
  const problems: string[] = [];
  const ran = new Set<number>();
  let pending: Array<{ status: number; where: string }> = [];
  const unexpected = (r: { status: number; where: string }) => {
    if (r.status === 0) problems.push(`${r.where}: no answer`);
    else if (r.status >= 400)
      problems.push(`${r.where}: answered ${r.status} (if the docs mean it, annotate: # -> ${r.status})`);
  };
  for (const entry of log.split('\n').filter(Boolean)) {
    const [kind, code, line] = entry.split(' ');
    if (kind === 'graphql-errors') {
      if (!opts.allowErrors)
        problems.push(
          `${blockLine(Number(code))}: an errors-only GraphQL answer (mark the block expect-errors)`,
        );
      continue;
    }
    if (kind === 'status') {
      pending.push({ status: Number(code), where: blockLine(Number(line)) });
      continue;
    }
    ran.add(Number(line));
    const last = pending.pop();
    if (!last) problems.push(`line ${line}: expects ${code}, but its command sent no request`);
    else if (last.status !== Number(code))
      problems.push(`line ${line}: expected ${code}, answered ${last.status}`);
    pending.forEach(unexpected);
    pending = [];
  }
  pending.forEach(unexpected);
  for (const line of opts.annotated ?? [])
    if (!ran.has(line)) problems.push(`line ${line}: its status annotation never ran`);
  return problems;
}

/** Error answers in a block's output. */
const ERROR_BODIES: Array<[RegExp, string]> = [
  [/"severity":\s*"(error|fatal)"/, 'an OperationOutcome error'],
  [
    /"error":\s*"(invalid_|unauthorized|unsupported|access_denied|server_error|temporarily_unavailable)/,
    'an OAuth2 error',
  ],
  [/"errors":\s*\[/, 'a GraphQL error'],
];

/** An errors-only GraphQL answer (grep -E): `errors` first, or after `"data": null`. */
export const GRAPHQL_ERRORS_ONLY =
  '^[[:space:]]*\\{[[:space:]]*("data"[[:space:]]*:[[:space:]]*null[[:space:]]*,[[:space:]]*)?"errors"[[:space:]]*:';

/** Bash run before each block: curl records each request's status; __doc_expect records an annotation. */
const PRELUDE = [
  'curl() {',
  '  local arg headers status rc=0',
  '  for arg in "$@"; do',
  '    case $arg in -D | --dump-header) echo "doc test: -D is the test\'s own (use -i)" >&2; return 2 ;; esac',
  '  done',
  '  headers=$(mktemp) body=$(mktemp)',
  // The body goes through a file to its reader unchanged, so that an errors-only GraphQL answer is seen even
  // when the example pipes it through node or keeps it in a variable.
  '  command curl -D "$headers" "$@" > "$body" || rc=$?',
  '  cat "$body"',
  '  status=$(awk \'toupper($1) ~ /^HTTP\\// { s = $2 } END { print s }\' "$headers")',
  '  printf \'status %s %s\\n\' "${status:-000}" "${BASH_LINENO[0]}" >> "$DOC_TEST_LOG"',
  `  if grep -qE '${GRAPHQL_ERRORS_ONLY}' "$body"; then`,
  '    printf \'graphql-errors %s\\n\' "${BASH_LINENO[0]}" >> "$DOC_TEST_LOG"',
  '  fi',
  '  rm -f "$headers" "$body"',
  '  return $rc',
  '}',
  '__doc_expect() { printf \'expect %s %s\\n\' "$1" "$2" >> "$DOC_TEST_LOG"; }',
].join('\n');

const texts = new Map(
  PAGES.filter((p) => fs.existsSync(path.join(ROOT, p))).map((p) => [
    p,
    fs.readFileSync(path.join(ROOT, p), 'utf8'),
  ]),
);
const blocks = [...texts].flatMap(([page, text]) => shellBlocks(page, text));

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-'));
const stateFile = path.join(work, 'state.sh');

// As a user's first start: the default credentials the examples use, and the core definitions.
const server = useServerProcess({
  env: {
    ADMIN_EMAIL: 'admin@example.com',
    ADMIN_PASSWORD: 'medplum_admin',
    CLIENT_ID: 'f54370de-eaf3-4d81-a17e-24860f667912',
    CLIENT_SECRET: 'change-me-client-secret',
    // A fresh start loads the FHIR R4 core value sets (the examples expand administrative-gender).
    LOAD_CORE_TERMINOLOGY: 'true',
  },
  timeoutMs: 170_000,
});

beforeAll(() => {
  fs.writeFileSync(stateFile, `export BASE=${server.base.replace(/\/$/, '')}\n`);
});

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

/** Runs one block in bash after the state the earlier blocks left; saves the state it leaves. */
function run(block: Block): { status: number | null; output: string; problems: string[] } {
  const log = path.join(work, 'requests.log');
  fs.writeFileSync(log, '');
  const head = [
    'set -a', // every assignment is exported, so `export -p` below carries it to the next block
    `source ${JSON.stringify(stateFile)}`,
    `DOC_TEST_LOG=${JSON.stringify(log)}`,
    'set -euo pipefail',
    PRELUDE,
  ].join('\n');
  const offset = head.split('\n').length;
  const script = [
    head,
    instrument(block.code),
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
  const where = (scriptLine: number) => {
    const n = scriptLine - offset;
    const lines = block.code.split('\n').length;
    return n >= 1 && n <= lines ? `line ${n}` : 'a request in a function';
  };
  const { lines, problems } = annotations(block.code);
  return {
    status: r.status,
    output: `${r.stdout}${r.stderr}`,
    problems: [
      ...problems,
      ...statusProblems(fs.readFileSync(log, 'utf8'), where, {
        annotated: lines,
        allowErrors: block.marker?.kind === 'expect-errors',
      }),
    ],
  };
}

describe('doc pages', () => {
  it('PAGES names every page, and every page it names exists', () => {
    const docs = fs
      .readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f.split(path.sep).join('/')}`);
    expect([...PAGES].sort()).toEqual(['README.md', 'CONTRIBUTING.md', ...docs].sort());
  });

  it('every block is either run or marked, with a reason, as skipped', () => {
    expect(blocks.length).toBeGreaterThan(10);
    for (const b of blocks.filter((x) => x.marker && x.marker.kind !== 'env')) {
      expect(b.marker?.reason, `${b.page}:${b.line} marker without a reason`).not.toBe('');
    }
    // Exactly one block defines BASE, and the ones the test runs do not redefine it (one meaning everywhere).
    expect(blocks.filter((b) => b.marker?.kind === 'env')).toHaveLength(1);
    for (const b of blocks.filter((x) => x.marker?.kind !== 'env')) {
      expect(b.code, `${b.page}:${b.line} sets BASE`).not.toMatch(/^\s*(export\s+)?BASE=/m);
    }
  });
});

describe('doc shell blocks', () => {
  for (const block of blocks) {
    const first = block.code.split('\n').find((l) => l.trim() && !l.trim().startsWith('#'));
    const skipped = block.marker?.kind === 'skip' || block.marker?.kind === 'env';
    it.skipIf(skipped)(
      `${block.page}:${block.line}: ${first}`,
      () => {
        const { status, output, problems } = run(block);
        if (block.marker?.kind !== 'expect-errors') {
          for (const [re, what] of ERROR_BODIES) expect(output, what).not.toMatch(re);
        }
        expect(problems, output).toEqual([]);
        expect(status, output).toBe(0);
      },
      90_000,
    );
  }
});

describe("the doc test's own checks", () => {
  it('turns status annotations into checks, line for line', () => {
    const code =
      'curl a   # -> 401\ncurl b \\\n  -d x\n# -> 404 not found\n# -> {"active":false}\n# a comment # -> 200';
    expect(instrument(code)).toBe(
      'curl a; __doc_expect 401 1\ncurl b \\\n  -d x\n__doc_expect 404 4\n# -> {"active":false}\n# a comment # -> 200',
    );
  });

  it('fails a request of 400 or more unless its command names that status', () => {
    const at = (n: number) => `line ${n}`;
    expect(statusProblems('status 200 1\nstatus 401 2\n', at)).toEqual([
      'line 2: answered 401 (if the docs mean it, annotate: # -> 401)',
    ]);
    expect(statusProblems('status 000 1\n', at)).toEqual(['line 1: no answer']);
    expect(statusProblems('status 200 1\nstatus 401 2\nexpect 401 2\n', at)).toEqual([]);
    expect(statusProblems('status 200 1\nexpect 401 1\n', at)).toEqual([
      'line 1: expected 401, answered 200',
    ]);
    expect(statusProblems('status 401 1\nexpect 401 1\nexpect 401 2\n', at)).toEqual([
      'line 2: expects 401, but its command sent no request',
    ]);
  });

  it('fails an annotation that never ran, and a bare status comment', () => {
    const code = 'curl a   # -> 401\nif false; then\n  curl b   # -> 404\nfi\ncurl c   # 201\n# 200 in prose';
    const { lines, problems } = annotations(code);
    expect(lines).toEqual([1, 3]);
    expect(problems).toEqual(['line 5: write the status as `# -> 201` (a bare `# 201` is not checked)']);
    const at = (n: number) => `line ${n}`;
    expect(statusProblems('status 401 1\nexpect 401 1\n', at, { annotated: lines })).toEqual([
      'line 3: its status annotation never ran',
    ]);
  });

  it('fails an errors-only GraphQL answer unless the block expects errors', () => {
    const at = (n: number) => `line ${n}`;
    expect(statusProblems('status 200 3\ngraphql-errors 3\n', at)).toEqual([
      'line 3: an errors-only GraphQL answer (mark the block expect-errors)',
    ]);
    expect(statusProblems('status 200 3\ngraphql-errors 3\n', at, { allowErrors: true })).toEqual([]);
    const grep = (body: string) =>
      spawnSync('grep', ['-qE', GRAPHQL_ERRORS_ONLY], { input: body }).status === 0;
    expect(grep('{"errors":[{"message":"x"}]}')).toBe(true);
    expect(grep('{ "data" : null, "errors": [] }')).toBe(true);
    expect(grep('HTTP/1.1 200 OK\r\n\r\n{"errors":[]}')).toBe(true);
    expect(grep('{"data":{"me":{"errors":[]}}}')).toBe(false);
    expect(grep('{"data":{"a":1},"errors":[]}')).toBe(false);
  });

  it('recognises error answers in the output', () => {
    const errors = (output: string) => ERROR_BODIES.filter(([re]) => re.test(output)).map(([, what]) => what);
    expect(
      errors('{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"invalid"}]}'),
    ).toEqual(['an OperationOutcome error']);
    expect(errors('{"error":"invalid_grant","error_description":"..."}')).toEqual(['an OAuth2 error']);
    expect(errors('{"errors":[{"message":"Too many expensive fields"}]}')).toEqual(['a GraphQL error']);
    expect(errors('{"issue":[{"severity":"information"}]} {"active":false} {"data":{"me":null}}')).toEqual(
      [],
    );
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes; repeats get -1, -2, ... */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of withoutCode(markdown).split('\n')) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = h[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The text outside fenced code blocks (fence lines kept, so headings keep their lines). */
function withoutCode(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** The relative link targets of a page (inline links outside code). */
export function relativeLinks(markdown: string): string[] {
  const text = withoutCode(markdown).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe('doc links', () => {
  for (const [page, text] of texts) {
    it(`${page}: every relative link leads somewhere`, () => {
      const broken: string[] = [];
      for (const link of relativeLinks(text)) {
        const [target, anchor] = link.split('#');
        const file = target ? path.join(path.dirname(path.join(ROOT, page)), target) : path.join(ROOT, page);
        if (!fs.existsSync(file)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md')) {
          if (!headingAnchors(fs.readFileSync(file, 'utf8')).has(anchor))
            broken.push(`${link}: no such heading`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
