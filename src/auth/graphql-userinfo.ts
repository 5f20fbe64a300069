// GraphQL side of OpenID Connect UserInfo: the `userInfo` query, the same claims /oauth2/userinfo answers.
import { builder } from '../graphql/builder.js';
import { requireCaller } from '../graphql/context.js';
import { userInfo, type UserInfo } from './userinfo.js';

const UserInfoRef = builder.objectRef<UserInfo>('UserInfo').implement({
  description:
    "OpenID Connect claims about the signed-in user, as the session's scope allows (GET /oauth2/userinfo).",
  fields: (t) => ({
    sub: t.exposeID('sub', { description: 'The user id (the sub of the ID token).' }),
    email: t.exposeString('email', { nullable: true, description: 'With the email scope.' }),
    name: t.exposeString('name', { nullable: true, description: 'With the profile scope.' }),
    givenName: t.exposeString('given_name', { nullable: true, description: 'With the profile scope.' }),
    familyName: t.exposeString('family_name', { nullable: true, description: 'With the profile scope.' }),
  }),
});

builder.queryField('userInfo', (t) =>
  t.field({
    type: UserInfoRef,
    description:
      "OpenID Connect UserInfo of the caller's user: sub, and email or names as the session's scope allows. " +
      'A client application (no user) or a session without openid gets 403 (insufficient_scope).',
    resolve: (_r, _a, ctx) => userInfo(ctx.services.db, requireCaller(ctx)),
  }),
);
