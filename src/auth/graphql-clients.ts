// A project's client applications as its admins manage them, in the public schema (GraphiQL can do it all):
// projectClients, createClientApplication, updateClientApplication, rotateClientSecret, deleteClientApplication
// (client-apps.ts). A secret appears in the answers of create and rotate only, never in a list.
import { builder } from '../graphql/builder.js';
import { requireCaller } from '../graphql/context.js';
import type { ClientAppRow, ClientWithSecret } from './client-apps.js';

const ClientTypeEnum = builder.enumType('ClientType', {
  description: 'How a client application authenticates.',
  values: {
    confidential: {
      value: 'confidential',
      description: 'Holds a secret (a server): client_credentials, and authorization_code with its secret.',
    },
    public: {
      value: 'public',
      description: 'Cannot keep a secret (a browser or native app): authorization_code with PKCE alone.',
    },
  } as const,
});

const ClientApplicationRef = builder.objectRef<ClientAppRow>('ClientApplication').implement({
  description: "A client application of the caller's project. Never its secret.",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The client id (client_id at the token endpoint).' }),
    name: t.exposeString('name'),
    type: t.field({ type: ClientTypeEnum, resolve: (c) => (c.public ? 'public' : 'confidential') }),
    redirectUris: t.exposeStringList('redirectUris', {
      description: 'Registered redirect URIs; a sign-in naming this client may give one of them, exactly.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsed: t.expose('lastUsed', {
      type: 'DateTime',
      nullable: true,
      description: 'When a token request last used this client.',
    }),
    previousSecretExpiresAt: t.expose('previousSecretExpiresAt', {
      type: 'DateTime',
      nullable: true,
      description:
        'Until when the secret replaced by the last rotation is still accepted; null when none is.',
    }),
    membershipId: t.id({
      nullable: true,
      description: "The client's membership of the project (setMemberRole changes its role).",
      resolve: (c) => c.membership?.id ?? null,
    }),
    role: t.string({
      nullable: true,
      description: 'admin or member: what its client_credentials sessions may do.',
      resolve: (c) => (c.membership ? (c.membership.admin ? 'admin' : 'member') : null),
    }),
  }),
});

const ClientSecretRef = builder.objectRef<ClientWithSecret>('ClientApplicationSecret').implement({
  description:
    'A client application with its new secret: shown in this answer only, never again. Store it now.',
  fields: (t) => ({
    client: t.field({ type: ClientApplicationRef, resolve: (c) => c.client }),
    secret: t.exposeString('secret', {
      nullable: true,
      description: 'The client secret (null for a public client). Only its SHA-256 is kept.',
    }),
  }),
});

builder.queryField('projectClients', (t) =>
  t.field({
    type: [ClientApplicationRef],
    description:
      "The caller's project's client applications, oldest first (project admins only; at most 100).",
    resolve: (_r, _a, ctx) => ctx.services.auth.clientApps.list(requireCaller(ctx)),
  }),
);

builder.mutationField('createClientApplication', (t) =>
  t.field({
    type: ClientSecretRef,
    description:
      'Creates a client application of the project (project admins only). A confidential one gets a secret, ' +
      'shown in this answer only. Redirect URIs: absolute https (http only for localhost, 127.0.0.1, [::1]), no ' +
      'fragment, at most 10 of at most 2000 characters. The client joins as a member unless admin is true.',
    args: {
      name: t.arg.string({ required: true }),
      type: t.arg({ type: ClientTypeEnum, required: false, defaultValue: 'confidential' }),
      redirectUris: t.arg.stringList({ required: false }),
      admin: t.arg.boolean({ required: false }),
    },
    resolve: (_r, a, ctx) =>
      ctx.services.auth.clientApps.create(requireCaller(ctx), {
        name: a.name,
        public: a.type === 'public',
        redirectUris: a.redirectUris ?? [],
        admin: a.admin ?? false,
      }),
  }),
);

builder.mutationField('updateClientApplication', (t) =>
  t.field({
    type: ClientApplicationRef,
    description:
      'Renames a client application and/or replaces its redirect URIs (the list given is the new one).',
    args: {
      id: t.arg.id({ required: true }),
      name: t.arg.string({ required: false }),
      redirectUris: t.arg.stringList({ required: false }),
    },
    resolve: (_r, a, ctx) =>
      ctx.services.auth.clientApps.update(requireCaller(ctx), String(a.id), {
        name: a.name ?? undefined,
        redirectUris: a.redirectUris ?? undefined,
      }),
  }),
);

builder.mutationField('rotateClientSecret', (t) =>
  t.field({
    type: ClientSecretRef,
    description:
      'Gives a confidential client a new secret, shown in this answer only. The replaced secret is still ' +
      'accepted for CLIENT_SECRET_ROTATION_GRACE (24 h by default), so its users can switch without downtime.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.clientApps.rotateSecret(requireCaller(ctx), String(a.id)),
  }),
);

builder.mutationField('deleteClientApplication', (t) =>
  t.boolean({
    description:
      'Deletes a client application: every token issued to it or through it (access and refresh) is refused ' +
      'from the next request on, on every instance.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.auth.clientApps.remove(requireCaller(ctx), String(a.id)),
  }),
);
