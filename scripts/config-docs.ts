// `npm run docs:config`: writes the settings section of docs/configuration.md from the settings table
// (src/config/settings.ts), between its two markers; the prose around them is written by hand and kept. With
// --check, fails when the committed page is not current (test/config.embedded.test.ts checks the same).
import fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import prettier from 'prettier';
import { TOPICS } from '../src/config/settings.js';
import type { OtherVariable, ServerSetting, Topic } from '../src/config/readers.js';

/** The configuration page. */
export const PAGE = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
export const START = '<!-- settings: generated from src/config/settings.ts by `npm run docs:config` -->';
export const END = '<!-- settings: end of the generated section -->';

/** A Markdown table cell: a `|` would end the cell. */
const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** One row: variable, type, default, meaning. */
function row(v: ServerSetting | OtherVariable): string {
  const [type, def] = 'read' in v ? [v.read.type, v.read.defaultText] : [v.type, v.defaultText];
  const meaning = 'only' in v && v.only ? `${v.only} only: ${v.doc}` : v.doc;
  return `| ${[`\`${v.env}\``, type, def, meaning].map(cell).join(' | ')} |`;
}

/** The generated section: one heading and table per topic. */
export function settingsSection(): string {
  const topics: readonly Topic[] = TOPICS;
  return topics
    .map((t) =>
      [`## ${t.title}`, '', t.about, '', '| variable | type | default | meaning |', '| - | - | - | - |']
        .concat(t.settings.map(row))
        .join('\n'),
    )
    .join('\n\n');
}

/** The page with its generated section replaced, formatted as `prettier --check` wants it. */
export async function renderPage(current: string): Promise<string> {
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${PAGE} lacks the markers ${START} ... ${END}`);
  const text = `${current.slice(0, start + START.length)}\n\n${settingsSection()}\n\n${current.slice(end)}`;
  const options = await prettier.resolveConfig(PAGE);
  return prettier.format(text, { ...options, filepath: PAGE });
}

/** Writes the page, or with --check reports whether it is current. */
async function main(): Promise<void> {
  const current = fs.readFileSync(PAGE, 'utf8');
  const next = await renderPage(current);
  if (process.argv.includes('--check')) {
    if (next !== current) {
      console.error('docs/configuration.md is out of date: run `npm run docs:config` and commit it.');
      process.exit(1);
    }
    console.log('docs/configuration.md is current.');
  } else if (next !== current) {
    fs.writeFileSync(PAGE, next);
    console.log('wrote docs/configuration.md');
  } else {
    console.log('docs/configuration.md is current.');
  }
}

// Run only as a command: the test imports renderPage.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
