// ConceptMap/$translate for a project: folds R4's and R5's ways of naming the code into one request, finds the maps
// (tx-resource first, then the inline map, then stored ones: the project's own, then the shared ones; by url, by id,
// or every map between the systems), bounds what they may hold, and lets the engine translate.
import type { Database } from '../db/database.js';
import { ApiError, badRequest, notFound } from '../core/errors.js';
import {
  checkOperationValues,
  compareVersionsDesc,
  countMapEntries,
  translateCode,
  TRANSLATE_OPERATION,
  type CodingValue,
  type ConceptMapResource,
  type TranslateParameters,
  type TranslateRequest,
} from './engine/index.js';
import { isRowId, ROW_COLUMNS, rowToResource, type ResourceRow } from './repository.js';
import { MAX_TX_RESOURCES } from './tx-resources.js';
import { toApiError } from './api-errors.js';

/** The most maps one translation reads from the database when no url names one. */
const MAX_MAPS = 50;

/** What $translate needs of the terminology service. */
export interface TranslateDeps {
  db: Database;
  /** VALUESET_MAX_ENTRIES: the most elements and targets the request's own maps may hold together. */
  maxEntries: number;
  /** The project's ConceptMap row of that url (own before shared; without a version the highest), as the service
   * selects every terminology resource by url. */
  selectByUrl(url: string, version: string | undefined): Promise<ResourceRow | undefined>;
}

/** ConceptMap/$translate for a project; returns the Parameters resource. */
export async function translate(
  deps: TranslateDeps,
  projectId: string,
  params: TranslateParameters & { id?: string },
): Promise<Record<string, unknown>> {
  try {
    checkOperationValues(TRANSLATE_OPERATION, params);
  } catch (err) {
    throw toApiError(err);
  }
  const req = requestOf(params);
  const own = requestMaps(params, deps.maxEntries);
  const url = params.url?.split('|')[0];
  const version = params.conceptMapVersion ?? params.url?.split('|')[1];
  let maps: ConceptMapResource[];
  if (params.id !== undefined) {
    maps = [await byId(deps.db, projectId, params.id)];
  } else if (url !== undefined) {
    const mine = own.filter((m) => m.url === url && (version === undefined || m.version === version));
    const row = mine.length > 0 ? undefined : await deps.selectByUrl(url, version);
    maps = mine.length > 0 ? [highest(mine)] : row ? [toMap(row)] : [];
    if (maps.length === 0)
      throw new ApiError(404, 'not-found', `Unable to find ConceptMap '${params.url}'`, {
        expression: ['url'],
      });
  } else {
    const stored = await bySystem(deps.db, projectId, req.reverse ? 'target' : 'source', req.system);
    maps = [...own, ...stored];
  }
  try {
    return translateCode(maps, req);
  } catch (err) {
    throw toApiError(err);
  }
}

/** The code to translate and its direction, from R4's or R5's parameters (one way only). */
function requestOf(p: TranslateParameters): TranslateRequest {
  const fromCoding = (c: CodingValue | undefined) => (c ? { code: c.code, system: c.system } : undefined);
  const cc = p.codeableConcept as { coding?: CodingValue[] } | undefined;
  const forward =
    (p.sourceCode !== undefined ? { code: p.sourceCode, system: p.sourceSystem ?? p.system } : undefined) ??
    fromCoding(p.sourceCoding) ??
    (p.code !== undefined ? { code: p.code, system: p.system } : undefined) ??
    fromCoding(p.coding) ??
    fromCoding(cc?.coding?.[0]);
  const backward =
    (p.targetCode !== undefined ? { code: p.targetCode, system: p.targetSystem } : undefined) ??
    fromCoding(p.targetCoding);
  if (forward && backward)
    throw badRequest('Give either a code to translate or a target code to translate back, not both', [
      'targetCode',
    ]);
  if (backward) {
    if (!backward.system) throw badRequest('targetSystem is required with targetCode', ['targetSystem']);
    return { code: backward.code ?? '', system: backward.system, reverse: true, otherSystem: p.sourceSystem };
  }
  if (!forward?.code)
    throw badRequest(
      'A code to translate is required (code, coding, codeableConcept, sourceCode or targetCode)',
      ['code'],
    );
  if (!forward.system)
    throw badRequest("The system of the code is required (system, or the coding's)", ['system']);
  const reverse = p.reverse === true;
  return {
    code: forward.code,
    system: forward.system,
    reverse,
    otherSystem: p.targetSystem ?? p.targetsystem,
  };
}

/** The request's own maps (tx-resource ConceptMaps, then the inline conceptMap), bounded together. */
function requestMaps(p: TranslateParameters, maxEntries: number): ConceptMapResource[] {
  const list = [...((p.txResource as unknown[] | undefined) ?? []), ...(p.conceptMap ? [p.conceptMap] : [])];
  if (list.length > MAX_TX_RESOURCES + 1)
    throw badRequest(`At most ${MAX_TX_RESOURCES} tx-resource parameters are accepted`, ['tx-resource']);
  const maps = list.filter(
    (r): r is ConceptMapResource => (r as { resourceType?: unknown })?.resourceType === 'ConceptMap',
  );
  let entries = 0;
  for (const m of maps) {
    if (!Array.isArray(m.group) && m.group !== undefined)
      throw badRequest('ConceptMap.group must be an array', ['conceptMap']);
    entries += countMapEntries(m, maxEntries - entries);
    if (entries > maxEntries)
      throw new ApiError(
        422,
        'too-costly',
        `The request's ConceptMaps hold more than ${maxEntries} elements and targets (VALUESET_MAX_ENTRIES); ` +
          'store a large map (POST ConceptMap) and translate with its url',
        { expression: ['conceptMap'] },
      );
  }
  return maps;
}

const highest = (maps: ConceptMapResource[]): ConceptMapResource =>
  [...maps].sort((a, b) => compareVersionsDesc(a.version ?? '', b.version ?? ''))[0];

const toMap = (row: ResourceRow) => rowToResource('ConceptMap', row) as unknown as ConceptMapResource;

async function byId(db: Database, projectId: string, id: string): Promise<ConceptMapResource> {
  const [row] = isRowId(id)
    ? await db.sql<ResourceRow & Record<string, unknown>>(
        `SELECT ${ROW_COLUMNS} FROM "ConceptMap" WHERE id = $1::uuid AND ("projectId" = $2::uuid OR "projectId" IS NULL)`,
        [id, projectId],
      )
    : [];
  if (!row) throw notFound(`ConceptMap/${id} not found`);
  return toMap(row);
}

/** Every map the project sees with a group from (forward) or into (reverse) the system, its own first. */
async function bySystem(
  db: Database,
  projectId: string,
  side: 'source' | 'target',
  system: string,
): Promise<ConceptMapResource[]> {
  const rows = await db.sql<ResourceRow & Record<string, unknown>>(
    `SELECT ${ROW_COLUMNS} FROM "ConceptMap"
     WHERE ("projectId" = $1::uuid OR "projectId" IS NULL) AND resource->'group' @> $2::jsonb
     ORDER BY ("projectId" IS NULL), "updatedAt" DESC, id LIMIT ${MAX_MAPS}`,
    [projectId, JSON.stringify([{ [side]: system }])],
  );
  return rows.map(toMap);
}
