// Wires terminology into a server: stores for CodeSystem and ValueSet, change notifications, core definitions.
import type { Services } from '../services.js';
import { loadCoreTerminology } from './core.js';
import { TerminologyStore } from './stores.js';

/** Registers the stores, subscribes to changes and (when configured) loads the FHIR R4 core definitions. */
export async function setupTerminology(services: Services): Promise<void> {
  const t = services.terminology;
  services.fhir.register('CodeSystem', new TerminologyStore('CodeSystem', t));
  services.fhir.register('ValueSet', new TerminologyStore('ValueSet', t));
  await t.start();
  if (services.config.loadCoreTerminology) {
    const r = await loadCoreTerminology(services.db, services.logger);
    // Another instance may hold indexes of the rows replaced by a newer package version.
    if (r.loaded) await services.db.notify('terminology_changed', '*');
  }
}
