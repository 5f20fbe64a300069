// GraphQL types and operations of accounts and sessions: me, logout, revokeSession, revokeOtherSessions, createUser.
import { builder } from '../graphql/builder.js';
import { ApiError } from '../core/errors.js';
import { requireCaller, type GraphQLContext } from '../graphql/context.js';
import { OAuthError } from '../core/oauth-error.js';
import { parseBasic } from '../core/basic-auth.js';
import { describeUserAgent } from './user-agent.js';
import { membershipRows as loadMembershipRows, type MembershipRows } from './membership-rows.js';
import type { SessionRow } from './session-admin.js';
import { actorOf } from './audit.js';
import { createProject } from './projects.js';
import { acceptInvitation, declineInvitation, pendingInvitations } from './invitations.js';
import type { LoginResult } from './mfa-sign-in.js';

export const UserRef = builder.prismaObject('User', {
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    firstName: t.exposeString('firstName', { nullable: true }),
    lastName: t.exposeString('lastName', { nullable: true }),
    serverAdmin: t.exposeBoolean('serverAdmin', {
      description: 'A server administrator may create projects.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const ProjectRef = builder.prismaObject('Project', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    mfaRequired: t.exposeBoolean('mfaRequired', {
      description: 'Members sign in with a second factor (setProjectMfaRequired).',
    }),
  }),
});

export const MembershipRef = builder.prismaObject('ProjectMembership', {
  name: 'ProjectMembership',
  fields: (t) => ({
    id: t.exposeID('id'),
    admin: t.exposeBoolean('admin'),
    project: t.relation('project'),
    user: t.relation('user', { nullable: true }),
  }),
});

/** An active session, and whether it is the one of this request. */
type SessionShape = SessionRow & { current: boolean };

export const SessionRef = builder.objectRef<SessionShape>('Session').implement({
  description: 'An active sign-in (Login) of the caller.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The login id, to pass to revokeSession / POST /auth/revoke.' }),
    userAgent: t.exposeString('userAgent', { nullable: true }),
    remoteAddress: t.exposeString('remoteAddress', { nullable: true }),
    browser: t.string({ nullable: true, resolve: (s) => describeUserAgent(s.userAgent).browser ?? null }),
    os: t.string({ nullable: true, resolve: (s) => describeUserAgent(s.userAgent).os ?? null }),
    authMethod: t.exposeString('authMethod'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsed: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.lastUsed ?? s.createdAt }),
    current: t.exposeBoolean('current'),
  }),
});

export const InvitationRef = builder.prismaObject('Invitation', {
  description:
    'An invitation of an email address to a project. The account holder accepts it (acceptInvitation) to join.',
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    admin: t.exposeBoolean('admin', { description: 'The holder joins as a project admin.' }),
    project: t.relation('project'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    status: t.string({
      description: 'pending, accepted or declined.',
      resolve: (i) => (i.acceptedAt ? 'accepted' : i.declinedAt ? 'declined' : 'pending'),
    }),
  }),
});

interface MeShape {
  loginId: string;
  userId: string | null;
  clientId: string | null;
  projectId: string;
  membershipId: string;
}

/** The session's membership rows (batched per operation); 404 when they were deleted after the token was checked. */
async function membershipRows(ctx: GraphQLContext, membershipId: string): Promise<MembershipRows> {
  const rows = await ctx
    .loader<string, MembershipRows | null>('auth.membershipRows', (ids) =>
      loadMembershipRows(ctx.services.db, ids),
    )
    .load(membershipId);
  if (!rows) throw new ApiError(404, 'not-found', 'The membership of this session no longer exists');
  return rows;
}

export const MeRef = builder.objectRef<MeShape>('Me').implement({
  fields: (t) => ({
    loginId: t.exposeID('loginId'),
    user: t.field({
      type: UserRef,
      nullable: true,
      resolve: async (me, _a, ctx) => (await membershipRows(ctx, me.membershipId)).user,
    }),
    project: t.field({
      type: ProjectRef,
      resolve: async (me, _a, ctx) => (await membershipRows(ctx, me.membershipId)).project,
    }),
    membership: t.field({
      type: MembershipRef,
      resolve: async (me, _a, ctx) => (await membershipRows(ctx, me.membershipId)).membership,
    }),
    clientId: t.exposeString('clientId', { nullable: true }),
    mfaEnrolled: t.boolean({
      description: "The caller's user has a confirmed second factor (false for a client application).",
      resolve: async (me, _a, ctx) => (await membershipRows(ctx, me.membershipId)).mfaEnrolled,
    }),
    invitations: t.prismaField({
      type: ['Invitation'],
      description: "Pending invitations to other projects addressed to the caller's account.",
      resolve: (_q, _me, _a, ctx) =>
        pendingInvitations(ctx.services.db, requireCaller(ctx), ctx.services.config.invitationTtlSec),
    }),
    sessions: t.field({
      type: [SessionRef],
      resolve: async (me, _a, ctx) => {
        const rows = await ctx.services.auth.sessions.active(requireCaller(ctx));
        return rows.map((l) => ({ ...l, current: l.id === me.loginId }));
      },
    }),
  }),
});

builder.queryField('me', (t) =>
  t.field({
    type: MeRef,
    description: 'The signed-in caller: user, project, membership and active sessions.',
    resolve: (_r, _a, ctx) => requireCaller(ctx),
  }),
);

builder.mutationField('logout', (t) =>
  t.boolean({
    description: 'Ends the session of the access token used for this request.',
    resolve: async (_r, _a, ctx) => {
      const caller = requireCaller(ctx);
      await ctx.services.auth.sessions.revoke(caller.loginId, caller.loginId, 'logout', actorOf(caller));
      return true;
    },
  }),
);

builder.mutationField('revokeSession', (t) =>
  t.boolean({
    description:
      "Ends one session of the caller's own user (or, for a project admin, of a member of the project).",
    args: { loginId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => {
      const caller = requireCaller(ctx);
      const id = await ctx.services.auth.sessions.findRevocable(caller, args.loginId);
      await ctx.services.auth.sessions.revoke(id, caller.loginId, 'revokeSession', actorOf(caller));
      return true;
    },
  }),
);

builder.mutationField('revokeOtherSessions', (t) =>
  t.int({
    description:
      "Ends every session of the caller's user except the current one; returns how many were ended.",
    resolve: (_r, _a, ctx) => ctx.services.auth.sessions.revokeOthers(requireCaller(ctx)),
  }),
);

builder.mutationField('createUser', (t) =>
  t.prismaField({
    type: 'User',
    description:
      'A project admin adds an account to the project. A new address gets an account with this password, member ' +
      'of the project at once. An address that already has an account gets an invitation instead (as inviteUser; ' +
      'the account and its password are untouched), and the answer looks the same: a User with this email and a ' +
      'new id, so the caller cannot tell whether the address was known. Throttled with inviteUser (429).',
    args: {
      email: t.arg.string({ required: true }),
      password: t.arg.string({ required: true }),
      admin: t.arg.boolean({ required: false }),
    },
    resolve: (_q, _r, args, ctx) =>
      ctx.services.auth.accounts.createUser(
        requireCaller(ctx),
        args.email,
        args.password,
        args.admin ?? false,
      ),
  }),
);

builder.mutationField('inviteUser', (t) =>
  t.prismaField({
    type: 'Invitation',
    description:
      'A project admin invites an email address. The same answer whether or not an account exists; the holder ' +
      'joins only by accepting (me.invitations, acceptInvitation) within INVITATION_TTL. Throttled with createUser.',
    args: { email: t.arg.string({ required: true }), admin: t.arg.boolean({ required: false }) },
    resolve: (_q, _r, a, ctx) =>
      ctx.services.auth.accounts.inviteUser(requireCaller(ctx), a.email, a.admin ?? false),
  }),
);

builder.mutationField('acceptInvitation', (t) =>
  t.prismaField({
    type: 'ProjectMembership',
    description:
      'The signed-in holder of the invited address accepts: they join the project. Sign in with the ' +
      "project's id (projectId on /auth/login) to work in it.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_q, _r, a, ctx) =>
      acceptInvitation(ctx.services.db, requireCaller(ctx), a.id, ctx.services.config.invitationTtlSec),
  }),
);

builder.mutationField('declineInvitation', (t) =>
  t.boolean({
    description: 'The signed-in holder of the invited address declines the invitation.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) =>
      declineInvitation(ctx.services.db, requireCaller(ctx), a.id, ctx.services.config.invitationTtlSec),
  }),
);

const CreatedProjectRef = builder
  .objectRef<{ projectId: string; adminUserId: string; clientId: string; clientSecret: string }>(
    'CreatedProject',
  )
  .implement({
    fields: (t) => ({
      clientId: t.exposeID('clientId', {
        description: "The project's first client application (confidential).",
      }),
      clientSecret: t.exposeString('clientSecret', {
        description:
          'Its secret: shown in this answer only, never again (rotateClientSecret makes a new one).',
      }),
      project: t.prismaField({
        type: 'Project',
        resolve: (query, p, _a, ctx) =>
          ctx.services.db.prisma.project.findUniqueOrThrow({ ...query, where: { id: p.projectId } }),
      }),
      admin: t.prismaField({
        type: 'User',
        resolve: (query, p, _a, ctx) =>
          ctx.services.db.prisma.user.findUniqueOrThrow({ ...query, where: { id: p.adminUserId } }),
      }),
    }),
  });

builder.mutationField('createProject', (t) =>
  t.field({
    type: CreatedProjectRef,
    description:
      'A server administrator creates a project with its first admin user (a new account) and its first client ' +
      'application (confidential, project admin), whose secret is in this answer only.',
    args: {
      name: t.arg.string({ required: true }),
      adminEmail: t.arg.string({ required: true }),
      adminPassword: t.arg.string({ required: true }),
      adminFirstName: t.arg.string(),
      adminLastName: t.arg.string(),
    },
    resolve: (_r, a, ctx) =>
      createProject(ctx.services.db, ctx.services.auth.passwords, requireCaller(ctx), {
        name: a.name,
        adminEmail: a.adminEmail,
        adminPassword: a.adminPassword,
        adminFirstName: a.adminFirstName ?? undefined,
        adminLastName: a.adminLastName ?? undefined,
      }),
  }),
);

export const LoginResultRef = builder.objectRef<LoginResult>('LoginResult').implement({
  description:
    'A sign-in: its authorization code, or what it waits for (a second factor, or the enrolment of one).',
  fields: (t) => ({
    login: t.exposeID('login'),
    code: t.exposeString('code', { nullable: true }),
    mfaRequired: t.boolean({
      description: 'The sign-in waits for a code of the enrolled second factor (verifyMfa).',
      resolve: (r) => r.mfaRequired === true,
    }),
    mfaEnrollRequired: t.boolean({
      description: 'The project requires a second factor the user lacks: enrol it (enrollMfaAtLogin).',
      resolve: (r) => r.mfaEnrollRequired === true,
    }),
    enrollUri: t.exposeString('enrollUri', {
      nullable: true,
      description: 'The otpauth:// URI to enrol (with mfaEnrollRequired).',
    }),
    enrollQrCode: t.exposeString('enrollQrCode', {
      nullable: true,
      description: 'The URI as a QR code, a PNG data URL.',
    }),
    recoveryCodes: t.exposeStringList('recoveryCodes', {
      nullable: true,
      description: 'Recovery codes, shown once, when this sign-in enrolled the second factor.',
    }),
  }),
});

builder.mutationField('login', (t) =>
  t.field({
    type: LoginResultRef,
    description:
      'Password sign-in: creates a session and returns a one-time authorization code for oauth2/token; or, for a ' +
      'user with a second factor, mfaRequired (verifyMfa completes it), and in a project that requires one, for a ' +
      'user without, mfaEnrollRequired (enrollMfaAtLogin).',
    args: {
      email: t.arg.string({ required: true }),
      password: t.arg.string({ required: true }),
      scope: t.arg.string(),
      codeChallenge: t.arg.string(),
      codeChallengeMethod: t.arg.string(),
      projectId: t.arg.string(),
      clientId: t.arg.string(),
      redirectUri: t.arg.string({
        description:
          "One of the client's registered redirect URIs (exact match); the code exchange repeats it.",
      }),
      nonce: t.arg.string({
        description: 'OpenID Connect: a value the ID token of this sign-in repeats (at most 512 characters).',
      }),
    },
    resolve: (_r, args, ctx) =>
      ctx.services.auth.signIn.login(
        {
          email: args.email,
          password: args.password,
          scope: args.scope ?? undefined,
          codeChallenge: args.codeChallenge ?? undefined,
          codeChallengeMethod: args.codeChallengeMethod ?? undefined,
          projectId: args.projectId ?? undefined,
          clientId: args.clientId ?? undefined,
          redirectUri: args.redirectUri ?? undefined,
          nonce: args.nonce ?? undefined,
        },
        { userAgent: ctx.request.userAgent, remoteAddress: ctx.request.remoteAddress },
      ),
  }),
);

builder.mutationField('token', (t) =>
  t.field({
    type: 'JSON',
    description: 'OAuth2 token endpoint (authorization_code with PKCE, client_credentials, refresh_token).',
    args: {
      grantType: t.arg.string({ required: true }),
      code: t.arg.string(),
      codeVerifier: t.arg.string(),
      clientId: t.arg.string(),
      clientSecret: t.arg.string(),
      refreshToken: t.arg.string(),
      scope: t.arg.string(),
      redirectUri: t.arg.string(),
    },
    resolve: (_r, a, ctx) => {
      const grants = ctx.services.auth.grants;
      const client = {
        clientId: a.clientId || undefined,
        clientSecret: a.clientSecret || undefined,
        remoteAddress: ctx.request.remoteAddress,
      };
      switch (a.grantType) {
        case 'authorization_code':
          return grants.exchangeCode(
            a.code ?? '',
            a.codeVerifier ?? undefined,
            client,
            a.redirectUri || undefined,
          );
        case 'client_credentials':
          return grants.clientCredentials(
            a.clientId ?? undefined,
            a.clientSecret ?? undefined,
            { userAgent: ctx.request.userAgent, remoteAddress: ctx.request.remoteAddress },
            a.scope ?? undefined,
          );
        case 'refresh_token':
          return grants.refresh(a.refreshToken ?? undefined, client);
        default:
          throw new OAuthError('unsupported_grant_type', `Unsupported grant_type: ${a.grantType}`);
      }
    },
  }),
);

builder.queryField('introspect', (t) =>
  t.field({
    type: 'JSON',
    description: 'RFC 7662 token introspection.',
    args: { token: t.arg.string({ required: true }) },
    resolve: async (_r, a, ctx) => {
      // RFC 7662 2.1: the caller must be authorized (a Bearer token, or client credentials over HTTP Basic).
      if (!ctx.caller) {
        const basic = parseBasic(ctx.request.headers.authorization);
        if (!basic) {
          throw new OAuthError(
            'invalid_client',
            'Introspection requires a Bearer token or client credentials (HTTP Basic)',
          );
        }
        await ctx.services.auth.clients.authenticate(
          basic.clientId,
          basic.clientSecret,
          ctx.request.remoteAddress,
        );
      }
      return ctx.services.auth.introspection.introspect(a.token);
    },
  }),
);

builder.mutationField('revokeToken', (t) =>
  t.boolean({
    description: 'RFC 7009: revokes the session of an access or refresh token.',
    args: { token: t.arg.string({ required: true }) },
    resolve: async (_r, a, ctx) => {
      await ctx.services.auth.introspection.revoke(a.token);
      return true;
    },
  }),
);
