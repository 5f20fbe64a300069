// LOINC's linguistic variants (`LinguisticVariants/LinguisticVariants.csv` lists them; each is a
// `<lang><COUNTRY><ID>LinguisticVariant.csv` table): their long common names become designations in that language.
import path from 'node:path';
import type { Designation } from '../../engine/index.js';
import { csvRows, findFile } from '../release/csv.js';
import type { ReleaseFiles } from '../release/types.js';
import { loincUse, VARIANTS_REQUIRED } from './columns.js';

/** LOINC term -> its designations in the release's linguistic variants. */
export async function readVariants(
  files: ReleaseFiles,
  listPath: string,
  isTerm: (code: string) => boolean,
): Promise<Map<string, Designation[]>> {
  const out = new Map<string, Designation[]>();
  const dir = path.posix.dirname(listPath);
  const variants: Array<{ language: string; file: string }> = [];
  for await (const row of csvRows(files, listPath, VARIANTS_REQUIRED)) {
    const lang = row.get('ISO_LANGUAGE').trim();
    const country = row.get('ISO_COUNTRY').trim();
    const id = row.get('ID').trim();
    if (!/^[a-z]{2,3}$/.test(lang))
      throw row.error('ISO_LANGUAGE', `"${lang.slice(0, 20)}" is not a language code`);
    if (!/^[A-Z]{2}$/.test(country))
      throw row.error('ISO_COUNTRY', `"${country.slice(0, 20)}" is not a country code`);
    const name = `${lang}${country}${id}LinguisticVariant.csv`;
    const file = findFile(files, dir === '.' ? name : `${dir}/${name}`) ?? findFile(files, name);
    // A listed variant the release does not carry is skipped (releases ship a subset of the list).
    if (file) variants.push({ language: `${lang}-${country}`, file });
  }
  for (const v of variants) {
    for await (const row of csvRows(files, v.file, ['LOINC_NUM'])) {
      const term = row.get('LOINC_NUM').trim();
      if (!isTerm(term)) throw row.error('LOINC_NUM', `"${term.slice(0, 40)}" is not a term of Loinc.csv`);
      const value = (row.get('LONG_COMMON_NAME') || row.get('LinguisticVariantDisplayName')).trim();
      if (value === '') continue;
      const d: Designation = {
        language: v.language,
        use: loincUse('LONG_COMMON_NAME', 'Long common name'),
        value,
      };
      const list = out.get(term);
      if (list) list.push(d);
      else out.set(term, [d]);
    }
  }
  return out;
}
