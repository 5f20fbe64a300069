-- A concept's extensions (codesystem-conceptOrder, codesystem-label, itemWeight, rendering-*, standards-status,
-- ...): kept with the concept, so that reading a CodeSystem back returns them and $expand can show what they
-- mean (order, label and weight properties, status, carried-over extensions). NULL: none.
ALTER TABLE "Concept" ADD COLUMN "extensions" JSONB;

-- Which code system generations have concepts with extensions (an expansion then loads them): answered from this index
-- alone, without reading the concepts of a code system that has none.
CREATE INDEX "Concept_generationId_extensions_idx" ON "Concept" ("generationId") WHERE extensions IS NOT NULL;
