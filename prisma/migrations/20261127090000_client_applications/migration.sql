-- Client applications managed by project admins (issue 24): public clients (no secret), a list of redirect URIs
-- matched exactly, the previous secret kept for CLIENT_SECRET_ROTATION_GRACE after a rotation, when a client was last
-- used; a sign-in's redirect URI on its Login (the code exchange must repeat it); Login by client, for deleting one.
-- Existing clients are confidential and keep their one redirect URI, now the first of the list.
ALTER TABLE "ClientApplication" ALTER COLUMN "secretHash" DROP NOT NULL;
ALTER TABLE "ClientApplication" ADD COLUMN "previousSecretHash" TEXT;
ALTER TABLE "ClientApplication" ADD COLUMN "previousSecretExpiresAt" TIMESTAMP(3);
ALTER TABLE "ClientApplication" ADD COLUMN "public" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "ClientApplication" ADD COLUMN "redirectUris" TEXT[] DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "ClientApplication" ADD COLUMN "lastUsed" TIMESTAMP(3);
UPDATE "ClientApplication" SET "redirectUris" = ARRAY["redirectUri"] WHERE "redirectUri" IS NOT NULL;
ALTER TABLE "ClientApplication" DROP COLUMN "redirectUri";
ALTER TABLE "Login" ADD COLUMN "redirectUri" TEXT;
CREATE INDEX "Login_clientId_idx" ON "Login"("clientId");
