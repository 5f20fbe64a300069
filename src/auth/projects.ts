// Projects (tenants): a server administrator creates a project together with its first admin user and its first
// client application (confidential, a project admin, as the first start's is), whose secret is in this answer only.
// The creation is the new project's first audit record.
import type { Database } from '../db/database.js';
import { ApiError, badRequest, forbidden } from '../core/errors.js';
import type { Caller } from '../core/caller.js';
import { actorOf, recordAudit, sqlOf } from './audit.js';
import { insertClient } from './client-apps.js';
import { normalizeEmail } from './email.js';
import type { PasswordHasher } from './passwords.js';
import { hasLoneSurrogate } from '../core/unicode.js';

/** What createProject needs. */
export interface NewProject {
  name: string;
  adminEmail: string;
  adminPassword: string;
  adminFirstName?: string;
  adminLastName?: string;
}

/** The project, admin user and client application created; the client's secret is shown here only. */
export interface CreatedProject {
  projectId: string;
  adminUserId: string;
  clientId: string;
  clientSecret: string;
}

/** Longest project name accepted. */
const MAX_NAME = 200;

/** True when the caller is a user marked as a server administrator. */
export async function isServerAdmin(db: Database, caller: Caller): Promise<boolean> {
  if (!caller.userId) return false;
  const u = await db.prisma.user.findUnique({ where: { id: caller.userId }, select: { serverAdmin: true } });
  return u?.serverAdmin === true;
}

/** A server administrator creates a project and its first admin (a new account); one transaction. */
export async function createProject(
  db: Database,
  passwords: PasswordHasher,
  caller: Caller | 'cli',
  input: NewProject,
): Promise<CreatedProject> {
  // The CLI runs with the operator's access to the database itself, so it needs no server administrator.
  if (caller !== 'cli' && !(await isServerAdmin(db, caller)))
    throw forbidden('Only a server administrator can create projects');
  const name = input.name.trim();
  if (name.length === 0 || name.length > MAX_NAME)
    throw badRequest(`name must be 1-${MAX_NAME} characters`, ['name']);
  for (const [field, text] of [
    ['name', name],
    ['adminFirstName', input.adminFirstName],
    ['adminLastName', input.adminLastName],
  ] as const)
    if (text !== undefined && hasLoneSurrogate(text))
      throw badRequest(`${field} is not well-formed Unicode (it holds a lone surrogate)`, [field]);
  const email = normalizeEmail(input.adminEmail);
  if (!email) throw badRequest('adminEmail is not a valid address', ['adminEmail']);
  const passwordHash = await passwords.hashNew(input.adminPassword, 'adminPassword', email);
  return db.prisma.$transaction(async (tx) => {
    // Only server administrators get here, so saying the address is taken reveals nothing to a tenant.
    if (await tx.user.findUnique({ where: { email }, select: { id: true } }))
      throw new ApiError(409, 'duplicate', 'A user with this email already exists', {
        expression: ['adminEmail'],
      });
    const project = await tx.project.create({ data: { name } });
    const user = await tx.user.create({
      data: {
        email,
        passwordHash,
        firstName: input.adminFirstName?.trim() || null,
        lastName: input.adminLastName?.trim() || null,
      },
    });
    await tx.projectMembership.create({ data: { projectId: project.id, userId: user.id, admin: true } });
    const client = await insertClient(tx, project.id, {
      name: 'Default Client',
      redirectUris: [],
      public: false,
      admin: true,
    });
    await recordAudit(sqlOf(tx), project.id, {
      action: 'project.create',
      // The CLI acts with the database's own access: no user, session or address.
      actor: caller === 'cli' ? {} : actorOf(caller),
      target: { type: 'project', id: project.id },
      detail: {
        name,
        adminUserId: user.id,
        adminEmail: email,
        clientId: client.id,
        via: caller === 'cli' ? 'cli' : 'graphql',
      },
    });
    return {
      projectId: project.id,
      adminUserId: user.id,
      clientId: client.id,
      clientSecret: client.secret ?? '',
    };
  });
}
