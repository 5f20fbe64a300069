// The terminology feature: CodeSystem and ValueSet storage, $expand, and (when configured) the FHIR R4 core
// definitions loaded at start. Index files live beside the data, so they are read back after a restart.
import path from 'node:path';
import { CHANGED_CHANNEL, expandLimitsOf, TerminologyService } from '../terminology/service.js';
import { TerminologyStore } from '../terminology/stores.js';
import { loadCoreTerminology } from '../terminology/core.js';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { FILTER_RULE, terminologyRoutes } from '../rest/terminology-routes.js';
import { describeParameters } from '../terminology/engine/index.js';
import {
  acceptLanguageList,
  expandDocument,
  variablesFromParameters,
  variablesFromQuery,
  type ExpandVariables,
} from '../terminology/expand-input.js';
import type { Feature, FeatureDeps } from './feature.js';

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
    },
    operations: [
      {
        resourceType: 'ValueSet',
        name: 'expand',
        documentation: `${FILTER_RULE} Parameters: ${describeParameters()}.`,
      },
    ],
    routes: terminologyRoutes({
      // The expandValueSet query with every $expand parameter as a variable (built from the parameter table).
      document: expandDocument() as TypedDocumentNode<{ expandValueSet: unknown }, ExpandVariables>,
      fromQuery: variablesFromQuery,
      fromParameters: variablesFromParameters,
      acceptLanguage: acceptLanguageList,
    }),
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
