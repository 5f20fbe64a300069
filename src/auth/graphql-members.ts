// A project's members and pending invitations as its admins manage them, in the public schema (GraphiQL can do it
// all): projectMembers, setMemberRole, removeMember, projectInvitations, cancelInvitation (members.ts).
import { builder } from '../graphql/builder.js';
import { requireCaller } from '../graphql/context.js';
import type { MemberRow } from './members.js';

const MemberRef = builder.objectRef<MemberRow>('Member').implement({
  description: "A member of the caller's project: a user's account or a client application.",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The membership id (setMemberRole, removeMember).' }),
    userId: t.exposeID('userId', { nullable: true }),
    clientId: t.exposeID('clientId', { nullable: true }),
    email: t.exposeString('email', { nullable: true }),
    admin: t.exposeBoolean('admin'),
    role: t.string({ description: 'admin or member.', resolve: (m) => (m.admin ? 'admin' : 'member') }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastSignIn: t.expose('lastSignIn', {
      type: 'DateTime',
      nullable: true,
      description: 'When a session of this member last started (granted tokens).',
    }),
  }),
});

builder.queryField('projectMembers', (t) =>
  t.field({
    type: [MemberRef],
    description: "The caller's project's members, admins first (project admins only; at most 200 a page).",
    args: { count: t.arg.int({ required: false }), offset: t.arg.int({ required: false }) },
    resolve: (_r, a, ctx) =>
      ctx.services.auth.members.list(requireCaller(ctx), a.count ?? 100, a.offset ?? 0),
  }),
);

builder.queryField('projectInvitations', (t) =>
  t.prismaField({
    type: ['Invitation'],
    description: "The caller's project's pending invitations (project admins only).",
    resolve: (_q, _r, _a, ctx) =>
      ctx.services.auth.members.invitations(requireCaller(ctx), ctx.services.config.invitationTtlSec),
  }),
);

builder.mutationField('setMemberRole', (t) =>
  t.field({
    type: MemberRef,
    description:
      'Makes a member an admin (admin: true) or a member. Their sessions in the project end at once, on every ' +
      'instance (they sign in again with the new role). The last admin cannot be demoted (409).',
    args: { id: t.arg.id({ required: true }), admin: t.arg.boolean({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.members.setRole(requireCaller(ctx), String(a.id), a.admin),
  }),
);

builder.mutationField('removeMember', (t) =>
  t.boolean({
    description:
      'Removes a member from the project: their sessions in it end at once, on every instance. The last admin ' +
      'cannot be removed (409).',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.members.remove(requireCaller(ctx), String(a.id)),
  }),
);

builder.mutationField('cancelInvitation', (t) =>
  t.boolean({
    description: 'Cancels a pending invitation of the project: it can no longer be accepted.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.members.cancelInvitation(requireCaller(ctx), String(a.id)),
  }),
);
