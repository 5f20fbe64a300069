-- Which loader owns a shared terminology row: 'core' for the FHIR core definitions loaded at start; NULL for
-- everything else (REST writes, `npm run import`, including --shared). The core loader replaces only its own rows.
ALTER TABLE "CodeSystem" ADD COLUMN "source" TEXT;
ALTER TABLE "ValueSet" ADD COLUMN "source" TEXT;

-- Rows the core loader wrote before this column existed: it inserts them in the transaction that writes its
-- marker, so their creation time is the marker's time.
UPDATE "CodeSystem" SET "source" = 'core'
WHERE "projectId" IS NULL AND "createdAt" IN (SELECT "updatedAt" FROM "TerminologyMarker" WHERE name = 'fhir-r4-core');
UPDATE "ValueSet" SET "source" = 'core'
WHERE "projectId" IS NULL AND "createdAt" IN (SELECT "updatedAt" FROM "TerminologyMarker" WHERE name = 'fhir-r4-core');
