-- ConceptMap storage (issue 26: $translate): one row per resource, as ValueSet rows are.
CREATE TABLE "ConceptMap" (
    "id" UUID NOT NULL,
    "projectId" UUID,
    "url" TEXT,
    "version" TEXT,
    "name" TEXT,
    "status" TEXT,
    "resource" JSONB NOT NULL,
    "source" TEXT,
    "versionId" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ConceptMap_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "ConceptMap_url_idx" ON "ConceptMap"("url");
CREATE INDEX "ConceptMap_projectId_url_idx" ON "ConceptMap"("projectId", "url");
