// The audit log in the public schema (audit-log.ts): auditEvents, the caller's project's records newest first,
// paged by cursor, for its admins only (a member gets 403, as for every admin operation).
import { builder } from '../graphql/builder.js';
import { requireCaller } from '../graphql/context.js';
import { AUDIT_ACTIONS } from './audit.js';
import { AUDIT_PAGE_MAX, type AuditEventRow, type AuditPage } from './audit-log.js';

const AuditEventRef = builder.objectRef<AuditEventRow>('ProjectAuditEvent').implement({
  description:
    'One recorded action of the project: a sign-in or a failed one, a password or second-factor change, an ' +
    'admin action. Never holds a secret, token, password, code or link.',
  fields: (t) => ({
    id: t.exposeID('id'),
    at: t.expose('at', { type: 'DateTime', description: 'When the action was done.' }),
    action: t.exposeString('action', { description: `One of: ${AUDIT_ACTIONS.join(', ')}.` }),
    outcome: t.exposeString('outcome', { description: 'success or failure.' }),
    actorUserId: t.exposeID('actorUserId', { nullable: true, description: 'The user who acted.' }),
    actorLoginId: t.exposeID('actorLoginId', {
      nullable: true,
      description: 'The session (login id) the actor acted through.',
    }),
    actorClientId: t.exposeID('actorClientId', {
      nullable: true,
      description: 'The client application that acted, or through which the user did.',
    }),
    targetType: t.exposeString('targetType', {
      nullable: true,
      description: 'What was acted on: user, membership, invitation, client, session or project.',
    }),
    targetId: t.exposeString('targetId', { nullable: true }),
    remoteAddress: t.exposeString('remoteAddress', { nullable: true }),
    userAgent: t.exposeString('userAgent', { nullable: true, description: 'At most 512 characters.' }),
    detail: t.field({
      type: 'JSON',
      nullable: true,
      description: 'A few plain values (the new role, the sessions it ended, the reason of a failure, ...).',
      resolve: (e) => (e.detail ?? null) as object | null,
    }),
  }),
});

const AuditPageRef = builder.objectRef<AuditPage>('ProjectAuditEventPage').implement({
  description: 'A page of the audit log, newest first.',
  fields: (t) => ({
    events: t.field({ type: [AuditEventRef], resolve: (p) => p.events }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description: 'Pass as `after` for the next page; null on the last one.',
    }),
  }),
});

builder.queryField('auditEvents', (t) =>
  t.field({
    type: AuditPageRef,
    description:
      "The caller's project's audit log, newest first (project admins only). Kept AUDIT_RETENTION_DAYS days.",
    args: {
      first: t.arg.int({ description: `Events in the page: 1 to ${AUDIT_PAGE_MAX} (default 50).` }),
      after: t.arg.string({ description: 'nextCursor of the previous page.' }),
      action: t.arg.string({ description: 'Only this action (signin, member.role, ...).' }),
      actor: t.arg.id({ description: 'Only the actions of this user or client application (its id).' }),
    },
    resolve: (_r, a, ctx) =>
      ctx.services.auth.audit.list(requireCaller(ctx), {
        first: a.first,
        after: a.after,
        action: a.action,
        actor: a.actor === null || a.actor === undefined ? null : String(a.actor),
      }),
  }),
);
