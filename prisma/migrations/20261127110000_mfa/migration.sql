-- A second factor (docs/sessions-and-security.md, Second factor): a user's TOTP secret, pending until confirmed,
-- the last accepted time step (no replay) and the recovery codes' SHA-256, in a table of their own; a project
-- setting that makes a factor mandatory for its members; a sign-in waiting for its second factor.
ALTER TABLE "Project" ADD COLUMN "mfaRequired" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "Login" ADD COLUMN "mfaPending" TEXT;

CREATE TABLE "UserMfa" (
    "userId" UUID NOT NULL,
    "secret" TEXT NOT NULL,
    "enrolled" BOOLEAN NOT NULL DEFAULT false,
    "enrolledAt" TIMESTAMP(3),
    "lastStep" INTEGER,
    "recoveryCodes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UserMfa_pkey" PRIMARY KEY ("userId")
);

ALTER TABLE "UserMfa" ADD CONSTRAINT "UserMfa_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
