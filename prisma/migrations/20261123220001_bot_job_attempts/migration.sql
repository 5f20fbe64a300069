-- How many times a job has been claimed (1 on its first run): bots see it as event.attempt.
ALTER TABLE "BotJob" ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0;
-- Fair share: running jobs are counted per project when claiming.
CREATE INDEX "BotJob_projectId_status_idx" ON "BotJob"("projectId", "status");
