// GraphQL of the second factor (mfa.ts, mfa-sign-in.ts): mfaStatus, startMfaEnrollment, enrollMfa, disableMfa for a
// signed-in user; verifyMfa and enrollMfaAtLogin to complete a sign-in; setProjectMfaRequired for a project admin.
import { builder } from '../graphql/builder.js';
import { requireCaller, type GraphQLContext } from '../graphql/context.js';
import { LoginResultRef } from './graphql.js';
import type { Enrollment, MfaStatus, ProjectMfaSetting } from './mfa.js';

const MfaStatusRef = builder.objectRef<MfaStatus>('MfaStatus').implement({
  description: "The signed-in user's second factor.",
  fields: (t) => ({
    enrolled: t.exposeBoolean('enrolled'),
    recoveryCodesLeft: t.exposeInt('recoveryCodesLeft', {
      nullable: true,
      description: 'Unused recovery codes (null when not enrolled).',
    }),
    required: t.exposeBoolean('required', { description: "The caller's project requires a second factor." }),
  }),
});

const EnrollmentRef = builder.objectRef<Enrollment>('MfaEnrollment').implement({
  description:
    'A pending enrolment: scan the QR code (or enter the URI) in an authenticator app, then enrollMfa.',
  fields: (t) => ({
    enrollUri: t.exposeString('enrollUri', { description: 'otpauth://totp/... (SHA-1, 6 digits, 30 s).' }),
    enrollQrCode: t.exposeString('enrollQrCode', { description: 'The URI as a QR code, a PNG data URL.' }),
  }),
});

const ProjectMfaSettingRef = builder.objectRef<ProjectMfaSetting>('ProjectMfaSetting').implement({
  fields: (t) => ({
    projectId: t.exposeID('projectId'),
    mfaRequired: t.exposeBoolean('mfaRequired'),
    sessionsEnded: t.exposeInt('sessionsEnded', {
      description: 'Sessions of members without a second factor that turning it on ended.',
    }),
  }),
});

const client = (ctx: GraphQLContext) => ({
  userAgent: ctx.request.userAgent,
  remoteAddress: ctx.request.remoteAddress,
});

builder.queryField('mfaStatus', (t) =>
  t.field({
    type: MfaStatusRef,
    description: "The signed-in user's second factor: enrolled or not, recovery codes left.",
    resolve: (_r, _a, ctx) => ctx.services.auth.mfa.status(requireCaller(ctx)),
  }),
);

builder.mutationField('startMfaEnrollment', (t) =>
  t.field({
    type: EnrollmentRef,
    description:
      'Starts enrolling a second factor (TOTP): a secret kept until enrollMfa confirms it (asked again, the same ' +
      'one). 409 when one is enrolled: its secret is never shown again.',
    resolve: (_r, _a, ctx) => ctx.services.auth.mfa.startEnrollment(requireCaller(ctx)),
  }),
);

builder.mutationField('enrollMfa', (t) =>
  t.stringList({
    description:
      'Confirms the enrolment with a current 6-digit code: from now on sign-in asks for a code. Returns 10 ' +
      'recovery codes, each good once, shown in this answer only. Wrong codes are throttled (429).',
    args: { token: t.arg.string({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.mfa.confirmEnrollment(requireCaller(ctx), a.token),
  }),
);

builder.mutationField('disableMfa', (t) =>
  t.boolean({
    description:
      'Removes the second factor, with the password (or a current code or recovery code, as token) re-checked; ' +
      'failures are throttled (429). Refused (409) while a project of the account requires one.',
    args: { password: t.arg.string(), token: t.arg.string() },
    resolve: async (_r, a, ctx) => {
      await ctx.services.auth.mfa.disable(requireCaller(ctx), a.password, a.token);
      return true;
    },
  }),
);

builder.mutationField('verifyMfa', (t) =>
  t.field({
    type: LoginResultRef,
    description:
      'Completes a sign-in that answered mfaRequired, with a current code or a recovery code (used up): answers ' +
      'with its authorization code, as login does. Wrong codes are throttled (429); a code is good once.',
    args: { login: t.arg.string({ required: true }), token: t.arg.string({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.mfaSignIn.verify(a.login, a.token, client(ctx)),
  }),
);

builder.mutationField('enrollMfaAtLogin', (t) =>
  t.field({
    type: LoginResultRef,
    description:
      'Completes a sign-in that answered mfaEnrollRequired: confirms the enrolment (enrollUri) with a current ' +
      'code; answers with the authorization code and the recovery codes (shown once).',
    args: { login: t.arg.string({ required: true }), token: t.arg.string({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.mfaSignIn.enroll(a.login, a.token, client(ctx)),
  }),
);

builder.mutationField('renewLoginCode', (t) =>
  t.field({
    type: LoginResultRef,
    description:
      'Internal (the browser sign-in of /oauth2/authorize): a fresh authorization code for a sign-in that has just ' +
      'enrolled its second factor, once its recovery codes were shown.',
    args: { login: t.arg.string({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.mfaSignIn.renewCode(a.login),
  }),
);

builder.mutationField('setProjectMfaRequired', (t) =>
  t.field({
    type: ProjectMfaSettingRef,
    description:
      "A project admin requires (or no longer requires) a second factor of the project's members. Turning it on " +
      "ends the sessions of members without one (not the caller's own): they enrol at their next sign-in. " +
      "projectId, when given, must be the caller's project (another answers 404).",
    args: { required: t.arg.boolean({ required: true }), projectId: t.arg.id() },
    resolve: (_r, a, ctx) =>
      ctx.services.auth.mfa.setProjectRequired(requireCaller(ctx), a.required, a.projectId ?? undefined),
  }),
);
