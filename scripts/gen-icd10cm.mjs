#!/usr/bin/env node
// Writes a made-up ICD-10-CM tabular list in the layout of CDC's `icd10cm_tabular_<year>.xml` (no real content is
// copied: chapters, sections and codes are generated): <ICD10CM.tabular> with <version>, <introduction>, then
// <chapter> (name, desc, notes, sectionIndex, <section id> of nested <diag> with name/desc/notes), including
// <sevenChrDef> 7th-character extensions inherited by the codes below. Deterministic.
// Usage: node scripts/gen-icd10cm.mjs --out DIR [--year 2025] [--chapters 4] [--categories 6]
import fs from 'node:fs';
import path from 'node:path';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
if (!args.out) {
  process.stderr.write(
    'Usage: node scripts/gen-icd10cm.mjs --out DIR [--year 2025] [--chapters 4] [--categories 6]\n',
  );
  process.exit(2);
}
const year = args.year ?? '2025';
const chapters = Number(args.chapters ?? 4);
const categories = Number(args.categories ?? 6);
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const LETTERS = 'ABCDEFGHIJKLMNOPRSTV';
const WORDS = [
  'Cholera',
  'Typhoid fever',
  'Tuberculosis',
  'Influenza',
  'Pneumonia',
  'Fracture of skull',
  'Diabetes mellitus',
  'Hypertension',
  'Anemia',
  'Sjögren syndrome',
  'Migraine',
  'Asthma',
  'Dermatitis',
  'Gout',
  'Burn of wrist',
];

const lines = [
  '<?xml version="1.0" encoding="utf-8"?>',
  '<ICD10CM.tabular>',
  `  <version>${year}</version>`,
  '  <introduction>',
  '    <introSection type="title">',
  '      <title>ICD-10-CM TABULAR LIST of DISEASES and INJURIES</title>',
  '    </introSection>',
  '  </introduction>',
];
let codes = 0;
for (let c = 0; c < chapters; c++) {
  const letter = LETTERS[c];
  const sections = [
    [0, 49],
    [50, 99],
  ];
  const range = `${letter}00-${letter}99`;
  lines.push(
    '  <chapter>',
    `    <name>${c + 1}</name>`,
    `    <desc>Made-up diseases of group ${letter} (${range})</desc>`,
    '    <includes>',
    `      <note>conditions of group ${letter}</note>`,
    '    </includes>',
    '    <sectionIndex>',
  );
  for (const [f, l] of sections) {
    const id = `${letter}${String(f).padStart(2, '0')}-${letter}${String(l).padStart(2, '0')}`;
    lines.push(
      `      <sectionRef first="${id.slice(0, 3)}" last="${id.slice(4)}" id="${id}">Block ${id}</sectionRef>`,
    );
  }
  lines.push('    </sectionIndex>');
  for (const [f, l] of sections) {
    const id = `${letter}${String(f).padStart(2, '0')}-${letter}${String(l).padStart(2, '0')}`;
    lines.push(`    <section id="${id}">`, `      <desc>Block ${id} (${id})</desc>`);
    for (let k = 0; k < categories; k++) {
      const cat = `${letter}${String(f + k).padStart(2, '0')}`;
      const word = WORDS[(c * 7 + k) % WORDS.length];
      lines.push(
        '      <diag>',
        `        <name>${cat}</name>`,
        `        <desc>${esc(word)}${k ? ` type ${k}` : ''}</desc>`,
      );
      codes++;
      // Every third category has no subdivisions (a billable 3-character code); chapter 2's first category has
      // 7th characters (as injuries do); the others have .0-.2 with one level more under .1.
      if (k % 3 === 2) {
        lines.push('      </diag>');
        continue;
      }
      if (c === 1 && k === 0)
        lines.push(
          '        <sevenChrNote>',
          `          <note>The appropriate 7th character is to be added to each code from category ${cat}</note>`,
          '        </sevenChrNote>',
          '        <sevenChrDef>',
          '          <extension char="A">initial encounter</extension>',
          '          <extension char="D">subsequent encounter</extension>',
          '          <extension char="S">sequela</extension>',
          '        </sevenChrDef>',
        );
      for (let s = 0; s < 3; s++) {
        const sub = `${cat}.${s}`;
        lines.push(
          '        <diag>',
          `          <name>${sub}</name>`,
          `          <desc>${esc(word)}, site ${s} &amp; other</desc>`,
          '          <inclusionTerm>',
          `            <note>${esc(word)} NOS</note>`,
          '          </inclusionTerm>',
        );
        codes++;
        if (s === 1)
          for (let t = 1; t <= 2; t++) {
            lines.push(
              '          <diag>',
              `            <name>${sub}${t}</name>`,
              `            <desc>${esc(word)}, site ${s}, detail ${t}</desc>`,
              '          </diag>',
            );
            codes++;
          }
        lines.push('        </diag>');
      }
      lines.push('      </diag>');
    }
    lines.push('    </section>');
  }
  lines.push('  </chapter>');
}
lines.push('</ICD10CM.tabular>', '');
fs.mkdirSync(args.out, { recursive: true });
const file = path.join(args.out, `icd10cm_tabular_${year}.xml`);
fs.writeFileSync(file, lines.join('\n'));
process.stdout.write(`wrote ${codes} codes before 7th characters to ${file}\n`);
