-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "Project" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Project_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "User" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "passwordHash" TEXT NOT NULL,
    "firstName" TEXT,
    "lastName" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ClientApplication" (
    "id" UUID NOT NULL,
    "projectId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "redirectUri" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ClientApplication_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ProjectMembership" (
    "id" UUID NOT NULL,
    "projectId" UUID NOT NULL,
    "userId" UUID,
    "clientId" UUID,
    "admin" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ProjectMembership_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Login" (
    "id" UUID NOT NULL,
    "userId" UUID,
    "clientId" UUID,
    "projectId" UUID NOT NULL,
    "membershipId" UUID NOT NULL,
    "authMethod" TEXT NOT NULL,
    "scope" TEXT NOT NULL DEFAULT 'openid',
    "userAgent" TEXT,
    "remoteAddress" TEXT,
    "codeHash" TEXT,
    "codeChallenge" TEXT,
    "codeChallengeMethod" TEXT,
    "codeExpiresAt" TIMESTAMP(3),
    "codeUsedAt" TIMESTAMP(3),
    "granted" BOOLEAN NOT NULL DEFAULT false,
    "refreshSecretHash" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsed" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "revokedBy" TEXT,
    "revokedReason" TEXT,

    CONSTRAINT "Login_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SigningKey" (
    "id" TEXT NOT NULL,
    "alg" TEXT NOT NULL,
    "privateJwk" JSONB NOT NULL,
    "publicJwk" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SigningKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ProjectSecret" (
    "projectId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ProjectSecret_pkey" PRIMARY KEY ("projectId","name")
);

-- CreateTable
CREATE TABLE "CodeSystem" (
    "id" UUID NOT NULL,
    "projectId" UUID,
    "url" TEXT,
    "version" TEXT,
    "name" TEXT,
    "status" TEXT,
    "resource" JSONB NOT NULL,
    "versionId" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CodeSystem_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Concept" (
    "id" BIGSERIAL NOT NULL,
    "codeSystemId" UUID NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "code" TEXT NOT NULL,
    "display" TEXT,
    "definition" TEXT,
    "parents" TEXT[],
    "notSelectable" BOOLEAN NOT NULL DEFAULT false,
    "inactive" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT,
    "designations" JSONB,
    "properties" JSONB,

    CONSTRAINT "Concept_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ValueSet" (
    "id" UUID NOT NULL,
    "projectId" UUID,
    "url" TEXT,
    "version" TEXT,
    "name" TEXT,
    "status" TEXT,
    "resource" JSONB NOT NULL,
    "versionId" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ValueSet_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TerminologyIdentifier" (
    "id" BIGSERIAL NOT NULL,
    "projectId" UUID,
    "resourceType" TEXT NOT NULL,
    "resourceId" UUID NOT NULL,
    "system" TEXT,
    "value" TEXT NOT NULL,

    CONSTRAINT "TerminologyIdentifier_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Bot" (
    "id" UUID NOT NULL,
    "projectId" UUID NOT NULL,
    "name" TEXT,
    "description" TEXT,
    "resource" JSONB NOT NULL,
    "code" TEXT,
    "compiledCode" TEXT,
    "timeoutMs" INTEGER NOT NULL DEFAULT 10000,
    "memoryMb" INTEGER NOT NULL DEFAULT 64,
    "versionId" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Bot_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BotIdentifier" (
    "id" BIGSERIAL NOT NULL,
    "projectId" UUID NOT NULL,
    "botId" UUID NOT NULL,
    "system" TEXT NOT NULL DEFAULT '',
    "value" TEXT NOT NULL,

    CONSTRAINT "BotIdentifier_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BotExecution" (
    "id" UUID NOT NULL,
    "botId" UUID NOT NULL,
    "projectId" UUID NOT NULL,
    "requester" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "durationMs" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "message" TEXT,
    "log" TEXT,
    "contentType" TEXT,

    CONSTRAINT "BotExecution_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BotJob" (
    "id" UUID NOT NULL,
    "projectId" UUID NOT NULL,
    "botId" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "requester" TEXT,
    "responseStatus" INTEGER,
    "responseType" TEXT,
    "responseBody" TEXT,
    "responseHeaders" JSONB,
    "claimedBy" TEXT,
    "claimedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "BotJob_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

-- CreateIndex
CREATE UNIQUE INDEX "ProjectMembership_projectId_userId_key" ON "ProjectMembership"("projectId", "userId");

-- CreateIndex
CREATE UNIQUE INDEX "ProjectMembership_projectId_clientId_key" ON "ProjectMembership"("projectId", "clientId");

-- CreateIndex
CREATE UNIQUE INDEX "Login_codeHash_key" ON "Login"("codeHash");

-- CreateIndex
CREATE INDEX "Login_userId_idx" ON "Login"("userId");

-- CreateIndex
CREATE INDEX "Login_projectId_idx" ON "Login"("projectId");

-- CreateIndex
CREATE INDEX "CodeSystem_url_idx" ON "CodeSystem"("url");

-- CreateIndex
CREATE INDEX "CodeSystem_projectId_url_idx" ON "CodeSystem"("projectId", "url");

-- CreateIndex
CREATE INDEX "Concept_codeSystemId_ordinal_idx" ON "Concept"("codeSystemId", "ordinal");

-- CreateIndex
CREATE UNIQUE INDEX "Concept_codeSystemId_code_key" ON "Concept"("codeSystemId", "code");

-- CreateIndex
CREATE INDEX "ValueSet_url_idx" ON "ValueSet"("url");

-- CreateIndex
CREATE INDEX "ValueSet_projectId_url_idx" ON "ValueSet"("projectId", "url");

-- CreateIndex
CREATE INDEX "TerminologyIdentifier_resourceType_value_idx" ON "TerminologyIdentifier"("resourceType", "value");

-- CreateIndex
CREATE INDEX "TerminologyIdentifier_resourceId_idx" ON "TerminologyIdentifier"("resourceId");

-- CreateIndex
CREATE INDEX "Bot_projectId_idx" ON "Bot"("projectId");

-- CreateIndex
CREATE INDEX "BotIdentifier_botId_idx" ON "BotIdentifier"("botId");

-- CreateIndex
CREATE UNIQUE INDEX "BotIdentifier_projectId_system_value_key" ON "BotIdentifier"("projectId", "system", "value");

-- CreateIndex
CREATE INDEX "BotExecution_botId_startedAt_idx" ON "BotExecution"("botId", "startedAt");

-- CreateIndex
CREATE INDEX "BotExecution_projectId_startedAt_idx" ON "BotExecution"("projectId", "startedAt");

-- CreateIndex
CREATE INDEX "BotJob_status_createdAt_idx" ON "BotJob"("status", "createdAt");

-- AddForeignKey
ALTER TABLE "ClientApplication" ADD CONSTRAINT "ClientApplication_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProjectMembership" ADD CONSTRAINT "ProjectMembership_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProjectMembership" ADD CONSTRAINT "ProjectMembership_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProjectMembership" ADD CONSTRAINT "ProjectMembership_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "ClientApplication"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Login" ADD CONSTRAINT "Login_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Login" ADD CONSTRAINT "Login_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "ClientApplication"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Login" ADD CONSTRAINT "Login_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Login" ADD CONSTRAINT "Login_membershipId_fkey" FOREIGN KEY ("membershipId") REFERENCES "ProjectMembership"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProjectSecret" ADD CONSTRAINT "ProjectSecret_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Concept" ADD CONSTRAINT "Concept_codeSystemId_fkey" FOREIGN KEY ("codeSystemId") REFERENCES "CodeSystem"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BotIdentifier" ADD CONSTRAINT "BotIdentifier_botId_fkey" FOREIGN KEY ("botId") REFERENCES "Bot"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BotExecution" ADD CONSTRAINT "BotExecution_botId_fkey" FOREIGN KEY ("botId") REFERENCES "Bot"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BotJob" ADD CONSTRAINT "BotJob_botId_fkey" FOREIGN KEY ("botId") REFERENCES "Bot"("id") ON DELETE CASCADE ON UPDATE CASCADE;

