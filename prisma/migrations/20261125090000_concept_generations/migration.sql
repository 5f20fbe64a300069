-- Concept generations (README "Terminology", Storage): the concepts of a CodeSystem are written in small
-- transactions into a generation readers do not see ('writing'), then made visible in one short transaction
-- ('live': at most one per CodeSystem); the generation a write or delete replaces is 'retired' and its rows are
-- removed in small steps afterwards. A crash between the two leaves a 'writing' generation that is removed at the
-- next start. Concept rows belong to their generation (no longer to the CodeSystem row directly: a new
-- CodeSystem's concepts are written before its row exists).
CREATE TABLE "ConceptGeneration" (
    "id" BIGSERIAL NOT NULL,
    "codeSystemId" UUID NOT NULL,
    "state" TEXT NOT NULL,
    "conceptCount" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ConceptGeneration_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "ConceptGeneration_codeSystemId_state_idx" ON "ConceptGeneration"("codeSystemId", "state");

CREATE INDEX "ConceptGeneration_state_updatedAt_idx" ON "ConceptGeneration"("state", "updatedAt");

-- Not expressible in the Prisma schema: one live generation per CodeSystem.
CREATE UNIQUE INDEX "ConceptGeneration_live_key" ON "ConceptGeneration"("codeSystemId") WHERE "state" = 'live';

-- Every existing CodeSystem gets its live generation, holding the concepts it has.
INSERT INTO "ConceptGeneration" ("codeSystemId", "state", "conceptCount")
SELECT cs."id", 'live', (SELECT count(*) FROM "Concept" c WHERE c."codeSystemId" = cs."id")
FROM "CodeSystem" cs;

ALTER TABLE "Concept" ADD COLUMN "generationId" BIGINT;

UPDATE "Concept" c SET "generationId" = g."id"
FROM "ConceptGeneration" g WHERE g."codeSystemId" = c."codeSystemId";

ALTER TABLE "Concept" ALTER COLUMN "generationId" SET NOT NULL;

ALTER TABLE "Concept" DROP CONSTRAINT "Concept_codeSystemId_fkey";

DROP INDEX "Concept_codeSystemId_code_key";

DROP INDEX "Concept_codeSystemId_ordinal_idx";

CREATE UNIQUE INDEX "Concept_generationId_code_key" ON "Concept"("generationId", "code");

CREATE INDEX "Concept_generationId_ordinal_idx" ON "Concept"("generationId", "ordinal");

ALTER TABLE "Concept" ADD CONSTRAINT "Concept_generationId_fkey" FOREIGN KEY ("generationId") REFERENCES "ConceptGeneration"("id") ON DELETE CASCADE ON UPDATE CASCADE;
