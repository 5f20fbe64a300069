// The RF2 header lines (column names, in order) of the tables the importer reads, and the metadata concepts it
// reads them by.

export const CONCEPT_COLUMNS = ['id', 'effectiveTime', 'active', 'moduleId', 'definitionStatusId'] as const;
export const DESCRIPTION_COLUMNS = [
  'id',
  'effectiveTime',
  'active',
  'moduleId',
  'conceptId',
  'languageCode',
  'typeId',
  'term',
  'caseSignificanceId',
] as const;
export const RELATIONSHIP_COLUMNS = [
  'id',
  'effectiveTime',
  'active',
  'moduleId',
  'sourceId',
  'destinationId',
  'relationshipGroup',
  'typeId',
  'characteristicTypeId',
  'modifierId',
] as const;
export const LANGUAGE_COLUMNS = [
  'id',
  'effectiveTime',
  'active',
  'moduleId',
  'refsetId',
  'referencedComponentId',
  'acceptabilityId',
] as const;
export const SIMPLE_COLUMNS = [
  'id',
  'effectiveTime',
  'active',
  'moduleId',
  'refsetId',
  'referencedComponentId',
] as const;

export const SCT = 'http://snomed.info/sct';
export const IS_A = '116680003';
export const FSN = '900000000000003001';
export const SYNONYM = '900000000000013009';
export const DEFINED = '900000000000073002';
export const PREFERRED = '900000000000548007';
export const ACCEPTABLE = '900000000000549004';
export const EN_US = '900000000000509007';
export const EN_GB = '900000000000508004';
export const INTERNATIONAL_MODULE = '900000000000207008';
export const MODEL_MODULE = '900000000000012004';
