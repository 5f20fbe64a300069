// /auth/*: Medplum-compatible sign-in and session endpoints, each running a GraphQL operation; and the routes of
// the auth feature as a whole (/auth, /oauth2, /.well-known), dispatched by prefix.
import express, { Router } from 'express';
import { graphql } from '../generated/gql/index.js';
import { LoginDoc } from './login-document.js';
import { ApiError, badRequest } from '../core/errors.js';
import { runOperation } from '../graphql/executor.js';
import { contextFor } from '../rest/request.js';
import { operationOutcome, sendFhir } from '../rest/outcome.js';
import { asyncHandler, requireAuth } from '../rest/middleware.js';
import { oauthRouter } from './oauth-routes.js';
import { resetPage } from './reset-page.js';
import type { FeatureRoutes } from '../rest/app.js';
import { fhirBaseUrl } from '../config.js';
import { FHIR_JSON_TYPES, jsonBodyParser } from '../rest/json-body.js';
import { addMfaRoutes } from './mfa-routes.js';

const MeDoc = graphql(`
  query RestMe {
    me {
      loginId
      clientId
      mfaEnrolled
      user {
        id
        email
        firstName
        lastName
      }
      project {
        id
        name
      }
      membership {
        id
        admin
      }
      sessions {
        id
        userAgent
        remoteAddress
        browser
        os
        authMethod
        createdAt
        lastUsed
        current
      }
    }
  }
`);

const ChangePasswordDoc = graphql(`
  mutation RestChangePassword($oldPassword: String!, $newPassword: String!) {
    changePassword(oldPassword: $oldPassword, newPassword: $newPassword)
  }
`);

const RequestResetDoc = graphql(`
  mutation RestRequestPasswordReset($email: String!) {
    requestPasswordReset(email: $email)
  }
`);

const SetPasswordDoc = graphql(`
  mutation RestSetPassword($id: String!, $secret: String!, $password: String!) {
    setPassword(id: $id, secret: $secret, password: $password)
  }
`);

const RevokeDoc = graphql(`
  mutation RestRevokeSession($loginId: String!) {
    revokeSession(loginId: $loginId)
  }
`);

function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw badRequest(`${key} must be a string`, [key]);
  return v;
}

/** The /auth router. */
export function authRouter(jsonParser: express.RequestHandler): Router {
  const r = Router();
  r.post(
    '/auth/login',
    jsonParser,
    asyncHandler(async (req, res) => {
      const body = requireJsonObject(req.body);
      const email = optionalString(body, 'email');
      const password = optionalString(body, 'password');
      if (!email) throw badRequest('email is required', ['email']);
      if (!password) throw badRequest('password is required', ['password']);
      const data = await runOperation(
        LoginDoc,
        {
          email,
          password,
          scope: optionalString(body, 'scope'),
          codeChallenge: optionalString(body, 'codeChallenge'),
          codeChallengeMethod: optionalString(body, 'codeChallengeMethod'),
          projectId: optionalString(body, 'projectId'),
          clientId: optionalString(body, 'clientId'),
          redirectUri: optionalString(body, 'redirectUri'),
          nonce: optionalString(body, 'nonce'),
        },
        contextFor(req),
      );
      const result = data.login;
      // Medplum's shapes: {login, code}; {login, mfaRequired: true}; {login, mfaEnrollRequired: true, enrollUri,
      // enrollQrCode}. Never cached: a code or an enrolment secret is in it.
      res.setHeader('Cache-Control', 'no-store');
      res.json({
        login: result.login,
        code: result.code ?? undefined,
        mfaRequired: result.mfaRequired || undefined,
        mfaEnrollRequired: result.mfaEnrollRequired || undefined,
        enrollUri: result.enrollUri ?? undefined,
        enrollQrCode: result.enrollQrCode ?? undefined,
      });
    }),
  );

  r.get(
    '/auth/me',
    requireAuth,
    asyncHandler(async (req, res) => {
      const { me } = await runOperation(MeDoc, {}, contextFor(req));
      const profile = me.user
        ? {
            resourceType: 'Practitioner',
            id: me.user.id,
            name: [{ given: [me.user.firstName ?? ''], family: me.user.lastName ?? '' }],
            telecom: [{ system: 'email', use: 'work', value: me.user.email }],
          }
        : { resourceType: 'ClientApplication', id: me.clientId };
      const profileRef = `${profile.resourceType}/${profile.id}`;
      res.json({
        user: me.user ? { resourceType: 'User', id: me.user.id, email: me.user.email } : undefined,
        project: { resourceType: 'Project', id: me.project.id, name: me.project.name },
        membership: {
          resourceType: 'ProjectMembership',
          id: me.membership.id,
          project: { reference: `Project/${me.project.id}` },
          user: me.user ? { reference: `User/${me.user.id}` } : { reference: profileRef },
          profile: { reference: profileRef },
          admin: me.membership.admin,
        },
        profile,
        config: { resourceType: 'UserConfiguration' },
        security: {
          mfaEnrolled: me.mfaEnrolled,
          sessions: me.sessions.map((s) => ({
            id: s.id,
            lastUpdated: s.lastUsed,
            createdAt: s.createdAt,
            lastUsed: s.lastUsed,
            authMethod: s.authMethod,
            remoteAddress: s.remoteAddress,
            userAgent: s.userAgent,
            browser: s.browser,
            os: s.os,
            current: s.current,
          })),
        },
        loginId: me.loginId,
        fhirBase: `${fhirBaseUrl(req.api.config)}/`,
      });
    }),
  );

  r.post(
    '/auth/revoke',
    requireAuth,
    jsonParser,
    asyncHandler(async (req, res) => {
      const body = requireJsonObject(req.body ?? {});
      const loginId = body.loginId;
      if (loginId === undefined || loginId === null || loginId === '')
        throw badRequest('loginId is required', ['loginId']);
      if (typeof loginId !== 'string') throw badRequest('loginId must be a string', ['loginId']);
      await runOperation(RevokeDoc, { loginId }, contextFor(req));
      sendFhir(res, 200, operationOutcome('information', 'informational', 'Session revoked'));
    }),
  );
  // Medplum's path and body: {"oldPassword", "newPassword"}; the answer an OperationOutcome.
  r.post(
    '/auth/changepassword',
    requireAuth,
    jsonParser,
    asyncHandler(async (req, res) => {
      const body = requireJsonObject(req.body);
      const oldPassword = optionalString(body, 'oldPassword');
      const newPassword = optionalString(body, 'newPassword');
      if (!oldPassword) throw badRequest('oldPassword is required', ['oldPassword']);
      if (!newPassword) throw badRequest('newPassword is required', ['newPassword']);
      const data = await runOperation(ChangePasswordDoc, { oldPassword, newPassword }, contextFor(req));
      const ended = data.changePassword;
      sendFhir(
        res,
        200,
        operationOutcome(
          'information',
          'informational',
          `Password changed; ${ended} other session${ended === 1 ? '' : 's'} ended`,
        ),
      );
    }),
  );
  // Medplum's path and body: {"email"}. The same answer whether or not the address has an account.
  r.post(
    '/auth/resetpassword',
    jsonParser,
    asyncHandler(async (req, res) => {
      const email = optionalString(requireJsonObject(req.body), 'email');
      if (!email) throw badRequest('email is required', ['email']);
      await runOperation(RequestResetDoc, { email }, contextFor(req));
      sendFhir(
        res,
        200,
        operationOutcome(
          'information',
          'informational',
          'If the address has an account, a password reset link was sent to it',
        ),
      );
    }),
  );

  // The page a reset link opens (PASSWORD_RESET_URL unset): a form posting back here.
  r.get('/auth/setpassword', (req, res) => {
    const q = req.query;
    sendPage(res, 200, resetPage({ id: String(q.id ?? ''), secret: String(q.secret ?? '') }));
  });

  // {"id", "secret", "password"} as JSON (Medplum's body), or the page's form.
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  r.post(
    '/auth/setpassword',
    jsonParser,
    form,
    asyncHandler(async (req, res) => {
      const fromPage = req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
      const body = requireJsonObject(req.body);
      const [id, secret, password] = ['id', 'secret', 'password'].map((k) =>
        typeof body[k] === 'string' ? body[k] : '',
      );
      try {
        if (!password) throw badRequest('password is required', ['password']);
        await runOperation(SetPasswordDoc, { id, secret, password }, contextFor(req));
      } catch (err) {
        if (!fromPage || !(err instanceof ApiError) || err.status >= 500) throw err;
        return sendPage(res, err.status, resetPage({ id, secret, error: err.message }));
      }
      if (fromPage) return sendPage(res, 200, resetPage({ id, secret, done: true }));
      sendFhir(res, 200, operationOutcome('information', 'informational', 'Password set; sign in with it'));
    }),
  );
  addMfaRoutes(r, jsonParser, requireJsonObject);
  return r;
}

/** An HTML page that no cache keeps and no other page frames (it carries a reset link's secret); it loads nothing
 * and posts only to this server. */
function sendPage(res: express.Response, status: number, html: string): void {
  res
    .status(status)
    .setHeader('Cache-Control', 'no-store')
    .setHeader(
      'Content-Security-Policy',
      "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
    .setHeader('X-Frame-Options', 'DENY')
    .type('html')
    .send(html);
}

/** The parsed JSON body as an object, or 400. */
export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (body === undefined) throw badRequest('Request body must be JSON (Content-Type: application/json)');
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('Request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The auth feature's routes: /auth/*, /oauth2/* and /.well-known/*, dispatched by prefix from one layer, so a
 * request for another path (the generic FHIR routes come after) does not walk their patterns. */
export const authRoutes: FeatureRoutes = (r, _base, api) => {
  // Not the FHIR parser's BODY_LIMIT (50 MB): /auth/login is open to anonymous clients, and its bodies are tiny.
  const auth = authRouter(
    jsonBodyParser({
      limit: api.config.authBodyLimit,
      maxDepth: api.config.jsonMaxDepth,
      type: FHIR_JSON_TYPES,
    }),
  );
  const oauth = oauthRouter();
  r.use((req, res, next) => {
    const p = req.path;
    if (p.startsWith('/auth/')) auth(req, res, next);
    else if (p.startsWith('/oauth2/') || p.startsWith('/.well-known/')) oauth(req, res, next);
    else next();
  });
};
