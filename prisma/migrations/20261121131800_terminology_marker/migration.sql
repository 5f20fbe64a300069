-- CreateTable
CREATE TABLE "TerminologyMarker" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TerminologyMarker_pkey" PRIMARY KEY ("name")
);
