-- What a bot execution's host calls (medplum.*, fetch) cost, and the first budget that refused one (its message
-- names the setting): BOT_HOST_CALLS_PER_EXECUTION, BOT_HOST_BYTES_PER_EXECUTION, BOT_PROJECT_WRITES_PER_SECOND,
-- LARGE_REQUESTS_PER_PROJECT/MAX. Existing rows: no calls counted.
ALTER TABLE "BotExecution" ADD COLUMN "hostCalls" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "BotExecution" ADD COLUMN "hostBytes" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "BotExecution" ADD COLUMN "hostRefused" TEXT;
