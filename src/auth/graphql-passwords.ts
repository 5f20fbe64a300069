// GraphQL: changePassword (password-change.ts), in the public schema.
import { builder } from '../graphql/builder.js';
import { requireCaller } from '../graphql/context.js';

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
