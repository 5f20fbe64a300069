// LOINC's table columns as the release names them (LOINC 2.7x `LoincTable/Loinc.csv` and the AnswerFile tables),
// and the concept properties they become.

/** Loinc.csv columns an import needs. */
export const LOINC_REQUIRED = ['LOINC_NUM', 'COMPONENT', 'STATUS', 'LONG_COMMON_NAME'] as const;

/** Loinc.csv columns kept as string properties (the standard LOINC properties, by their column names). */
export const LOINC_PROPERTIES = [
  'COMPONENT',
  'PROPERTY',
  'TIME_ASPCT',
  'SYSTEM',
  'SCALE_TYP',
  'METHOD_TYP',
  'CLASS',
  'CLASSTYPE',
  'STATUS',
  'ORDER_OBS',
  'EXAMPLE_UCUM_UNITS',
  'VersionFirstReleased',
  'VersionLastChanged',
] as const;

/** LOINC's CLASSTYPE codes. */
export const CLASSTYPE_NAMES: Record<string, string> = {
  '1': 'Laboratory class',
  '2': 'Clinical class',
  '3': 'Claims attachments',
  '4': 'Surveys',
};

export const ANSWER_LIST_REQUIRED = [
  'AnswerListId',
  'AnswerListName',
  'AnswerStringId',
  'DisplayText',
] as const;
export const ANSWER_LINK_REQUIRED = ['LoincNumber', 'AnswerListId'] as const;
export const VARIANTS_REQUIRED = ['ID', 'ISO_LANGUAGE', 'ISO_COUNTRY'] as const;

/** A LOINC code (`12345-6`), an answer (`LA1234-5`), an answer list (`LL123-4`) or a part (`LP123-4`). */
export const LOINC_CODE = /^(?:L[ALP])?\d{1,8}-\d$/;

/** Use of a LOINC designation (the column it comes from), in LOINC's own system. */
export function loincUse(column: 'SHORTNAME' | 'DisplayName' | 'LONG_COMMON_NAME', display: string) {
  return { system: 'http://loinc.org', code: column, display };
}
