// GraphQL: changePassword (password-change.ts), requestPasswordReset and setPassword (password-reset.ts).
import { builder } from '../graphql/builder.js';
import { requireCaller, type GraphQLContext } from '../graphql/context.js';

/** Where an anonymous request came from (audited with a reset's request and use). */
const from = (ctx: GraphQLContext) => ({
  remoteAddress: ctx.request.remoteAddress,
  userAgent: ctx.request.userAgent,
});

builder.mutationField('changePassword', (t) =>
  t.int({
    description:
      "Changes the signed-in user's password: oldPassword must be the current one (failures throttled as " +
      'sign-ins are), newPassword must meet the password policy. Every other session of the user ends at once; ' +
      'returns how many.',
    args: {
      oldPassword: t.arg.string({ required: true }),
      newPassword: t.arg.string({ required: true }),
    },
    resolve: (_r, a, ctx) =>
      ctx.services.auth.passwordChange.change(requireCaller(ctx), a.oldPassword, a.newPassword),
  }),
);

builder.mutationField('requestPasswordReset', (t) =>
  t.boolean({
    description:
      'Emails a one-time password reset link to the address if it has an account (SMTP_URL); answers true either ' +
      'way. Without SMTP configured: 501 (a server administrator issues links with npm run user:reset-link).',
    args: { email: t.arg.string({ required: true }) },
    resolve: async (_r, a, ctx) => {
      await ctx.services.auth.passwordResets.request(a.email, from(ctx));
      return true;
    },
  }),
);

builder.mutationField('setPassword', (t) =>
  t.boolean({
    description:
      'Sets a password with a reset link (its id and secret): once, before PASSWORD_RESET_TTL ends; the password ' +
      'must meet the policy. Every session of the account ends.',
    args: {
      id: t.arg.string({ required: true }),
      secret: t.arg.string({ required: true }),
      password: t.arg.string({ required: true }),
    },
    resolve: async (_r, a, ctx) => {
      await ctx.services.auth.passwordResets.redeem(a.id, a.secret, a.password, from(ctx));
      return true;
    },
  }),
);
