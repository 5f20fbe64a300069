-- The audit log (docs/sessions-and-security.md, Audit): sign-ins, failed sign-ins, password and second-factor
-- changes and admin actions of a project, read by its admins newest first (the first index pages them; the second
-- serves the retention's removal of old rows, AUDIT_RETENTION_DAYS).
CREATE TABLE "AuditEvent" (
    "id" UUID NOT NULL,
    "projectId" UUID NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "action" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "actorUserId" UUID,
    "actorLoginId" UUID,
    "actorClientId" UUID,
    "targetType" TEXT,
    "targetId" TEXT,
    "remoteAddress" TEXT,
    "userAgent" TEXT,
    "detail" JSONB,

    CONSTRAINT "AuditEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AuditEvent_projectId_at_id_idx" ON "AuditEvent"("projectId", "at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "AuditEvent_at_idx" ON "AuditEvent"("at");

-- AddForeignKey
ALTER TABLE "AuditEvent" ADD CONSTRAINT "AuditEvent_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
