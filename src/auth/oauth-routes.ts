// /oauth2/*: authorize (authorize-routes.ts), token (RFC 6749 + PKCE RFC 7636), userinfo (OIDC Core 5.3), logout,
// revoke (RFC 7009), introspect (RFC 7662); OAuth2 error JSON; the discovery document and the JWKS.
import express, { Router, type Request } from 'express';
import { graphql } from '../generated/gql/index.js';
import { OAuthError } from '../core/oauth-error.js';
import { parseBasic } from '../core/basic-auth.js';
import { runOperation } from '../graphql/executor.js';
import { contextFor } from '../rest/request.js';
import { asyncHandler, requireAuth } from '../rest/middleware.js';
import { operationOutcome, sendError, sendFhir } from '../rest/outcome.js';
import { ApiError } from '../core/errors.js';
import { addAuthorizeRoutes } from './authorize-routes.js';

const TokenDoc = graphql(`
  mutation RestToken(
    $grantType: String!
    $code: String
    $codeVerifier: String
    $clientId: String
    $clientSecret: String
    $refreshToken: String
    $scope: String
    $redirectUri: String
  ) {
    token(
      grantType: $grantType
      code: $code
      codeVerifier: $codeVerifier
      clientId: $clientId
      clientSecret: $clientSecret
      refreshToken: $refreshToken
      scope: $scope
      redirectUri: $redirectUri
    )
  }
`);

const LogoutDoc = graphql(`
  mutation RestLogout {
    logout
  }
`);

const IntrospectDoc = graphql(`
  query RestIntrospect($token: String!) {
    introspect(token: $token)
  }
`);

const RevokeTokenDoc = graphql(`
  mutation RestRevokeToken($token: String!) {
    revokeToken(token: $token)
  }
`);

const UserInfoDoc = graphql(`
  query RestUserInfo {
    userInfo {
      sub
      email
      name
      givenName
      familyName
    }
  }
`);

/** Client credentials from HTTP Basic (RFC 6749 2.3.1) or the form body. */
function clientCredentials(
  req: Request,
  form: Record<string, string>,
): { clientId?: string; clientSecret?: string } {
  const header = req.headers.authorization;
  if (header && /^basic /i.test(header)) {
    const basic = parseBasic(header);
    if (!basic) throw new OAuthError('invalid_client', 'Malformed HTTP Basic credentials');
    return basic;
  }
  return { clientId: form.client_id, clientSecret: form.client_secret };
}

/** A form body as a string map, or an OAuth2 invalid_request (a parameter given twice, or a NUL character:
 * PostgreSQL text cannot hold NUL, and no OAuth2 parameter may contain it). */
function formBody(req: Request): Record<string, string> {
  if (!req.is('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
  }
  const body = (req.body ?? {}) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== 'string') throw new OAuthError('invalid_request', `Parameter ${k} must appear once`);
    if (k.includes('\0') || v.includes('\0'))
      throw new OAuthError('invalid_request', 'The NUL character (%00) is not allowed in a form parameter');
    out[k] = v;
  }
  return out;
}

/** The /oauth2 router. */
export function oauthRouter(): Router {
  const r = Router();
  const form = express.urlencoded({ extended: false, limit: '64kb' });

  r.post(
    '/oauth2/token',
    form,
    asyncHandler(async (req, res) => {
      const body = formBody(req);
      if (!body.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
      const { clientId, clientSecret } = clientCredentials(req, body);
      const data = await runOperation(
        TokenDoc,
        {
          grantType: body.grant_type,
          code: body.code,
          codeVerifier: body.code_verifier,
          clientId,
          clientSecret,
          refreshToken: body.refresh_token,
          scope: body.scope,
          redirectUri: body.redirect_uri,
        },
        contextFor(req),
      );
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Pragma', 'no-cache');
      res.json(data.token);
    }),
  );

  const logout = asyncHandler(async (req, res) => {
    await runOperation(LogoutDoc, {}, contextFor(req));
    sendFhir(res, 200, operationOutcome('information', 'informational', 'Signed out'));
  });
  r.post('/oauth2/logout', requireAuth, logout);
  r.get('/oauth2/logout', requireAuth, logout);

  // OIDC Core 5.3: the Bearer token in the Authorization header (GET or POST); 401 (WWW-Authenticate) without a
  // valid one, 403 insufficient_scope for a client's token or one without openid.
  const userinfo = asyncHandler(async (req, res) => {
    try {
      const { userInfo: u } = await runOperation(UserInfoDoc, {}, contextFor(req));
      res.setHeader('Cache-Control', 'no-store');
      res.json({
        sub: u.sub,
        email: u.email ?? undefined,
        name: u.name ?? undefined,
        given_name: u.givenName ?? undefined,
        family_name: u.familyName ?? undefined,
      });
    } catch (err) {
      if (err instanceof ApiError && err.oauthError === 'insufficient_scope')
        res.setHeader(
          'WWW-Authenticate',
          `Bearer error="insufficient_scope", error_description="${err.message}"`,
        );
      sendError(req, res, err);
    }
  });
  r.get('/oauth2/userinfo', requireAuth, userinfo);
  r.post('/oauth2/userinfo', requireAuth, form, userinfo);

  addAuthorizeRoutes(r);

  r.post(
    '/oauth2/introspect',
    form,
    asyncHandler(async (req, res) => {
      const body = formBody(req);
      const data = await runOperation(IntrospectDoc, { token: body.token ?? '' }, contextFor(req));
      res.setHeader('Cache-Control', 'no-store');
      res.json(data.introspect);
    }),
  );

  r.post(
    '/oauth2/revoke',
    form,
    asyncHandler(async (req, res) => {
      const body = formBody(req);
      await runOperation(RevokeTokenDoc, { token: body.token ?? '' }, contextFor(req));
      res.status(200).json({});
    }),
  );

  r.get('/.well-known/jwks.json', (req, res) => {
    res.json({ keys: [req.api.publicJwk] });
  });
  r.get('/.well-known/openid-configuration', (req, res) => {
    const base = req.api.config.baseUrl;
    res.json({
      issuer: base,
      authorization_endpoint: `${base}oauth2/authorize`,
      token_endpoint: `${base}oauth2/token`,
      introspection_endpoint: `${base}oauth2/introspect`,
      revocation_endpoint: `${base}oauth2/revoke`,
      end_session_endpoint: `${base}oauth2/logout`,
      userinfo_endpoint: `${base}oauth2/userinfo`,
      jwks_uri: `${base}.well-known/jwks.json`,
      grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
      code_challenge_methods_supported: req.api.config.pkceAllowPlain ? ['S256', 'plain'] : ['S256'],
      // none: a public client names itself with client_id alone (authorization_code with PKCE, refresh).
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      scopes_supported: ['openid', 'offline_access', 'profile', 'email'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      claims_supported: [
        'iss',
        'sub',
        'aud',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'amr',
        'email',
        'name',
        'given_name',
        'family_name',
      ],
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    });
  });
  return r;
}
