// The terminology feature: CodeSystem and ValueSet storage, $expand, $lookup, $subsumes, and (when configured) the FHIR R4 core
// definitions loaded at start. Index files live beside the data, so they are read back after a restart.
import path from 'node:path';
import { CHANGED_CHANNEL, expandLimitsOf, TerminologyService } from './service.js';
import { TerminologyStore } from './stores.js';
import { loadCoreTerminology } from './core.js';
import { FILTER_RULE, terminologyRoutes } from './routes.js';
import { TERMINOLOGY_CAPABILITIES } from './capabilities.js';
import { describeParameters, TERMINOLOGY_OPERATIONS, EXPAND_OPERATION } from './engine/index.js';
import type { Feature, FeatureDeps } from '../rest/feature.js';

/** The terminology feature, with its service. */
export function terminologyFeature({ config, db, logger, dataDir, large }: FeatureDeps): Feature & {
  service: TerminologyService;
} {
  const service = new TerminologyService(db, logger, expandLimitsOf(config), {
    indexDir: dataDir ? path.join(dataDir, 'terminology-index') : undefined,
    indexBudgetBytes: config.terminologyIndexBudgetMb * 1024 * 1024,
    txResourceMaxConcepts: config.txResourceMaxConcepts,
    valueSetMaxEntries: config.valueSetMaxEntries,
  });
  const limits = { inlineMaxConcepts: config.inlineMaxConcepts, large };
  return {
    service,
    stores: {
      CodeSystem: new TerminologyStore('CodeSystem', service, limits),
      ValueSet: new TerminologyStore('ValueSet', service, limits),
      ConceptMap: new TerminologyStore('ConceptMap', service, limits),
    },
    // One entry per declared operation, documented from its parameter table ($expand keeps the definition url it
    // always had; the others name their FHIR OperationDefinition).
    operations: TERMINOLOGY_OPERATIONS.map((op) =>
      op === EXPAND_OPERATION
        ? {
            resourceType: op.resourceType,
            name: op.code,
            documentation: `${FILTER_RULE} Parameters: ${describeParameters(op)}.`,
          }
        : {
            resourceType: op.resourceType,
            name: op.code,
            definition: `http://hl7.org/fhir/OperationDefinition/${op.resourceType}-${op.code}`,
            documentation: `${op.description} Parameters: ${describeParameters(op)}.`,
          },
    ),
    capabilities: TERMINOLOGY_CAPABILITIES,
    routes: terminologyRoutes(service),
    async start() {
      await service.start();
      if (config.loadCoreTerminology) {
        const r = await loadCoreTerminology(db, logger);
        // Another instance may hold indexes of the rows replaced by a newer package version.
        if (r.loaded) await db.notify(CHANGED_CHANNEL, '*');
      }
    },
    close: () => service.close(),
  };
}
