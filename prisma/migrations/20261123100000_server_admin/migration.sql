-- AlterTable
ALTER TABLE "User" ADD COLUMN "serverAdmin" BOOLEAN NOT NULL DEFAULT false;

-- The first start's admin (the first admin of the oldest project) is the server administrator.
UPDATE "User" SET "serverAdmin" = true WHERE id = (
  SELECT m."userId" FROM "ProjectMembership" m JOIN "Project" p ON p.id = m."projectId"
  WHERE m.admin AND m."userId" IS NOT NULL ORDER BY p."createdAt", m."createdAt" LIMIT 1
);
