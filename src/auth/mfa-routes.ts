// /auth/mfa/*: Medplum's second-factor endpoints, each running GraphQL operations (graphql-mfa.ts). Answers that
// carry a secret (an enrolment URI, recovery codes, an authorization code) are never cached.
import express, { type Router } from 'express';
import { graphql } from '../generated/gql/index.js';
import { badRequest } from '../core/errors.js';
import { runOperation } from '../graphql/executor.js';
import { contextFor } from '../rest/request.js';
import { operationOutcome, sendFhir } from '../rest/outcome.js';
import { asyncHandler, requireAuth } from '../rest/middleware.js';

const StatusDoc = graphql(`
  query RestMfaStatus {
    mfaStatus {
      enrolled
      recoveryCodesLeft
      required
    }
  }
`);

const StartDoc = graphql(`
  mutation RestStartMfaEnrollment {
    startMfaEnrollment {
      enrollUri
      enrollQrCode
    }
  }
`);

const EnrollDoc = graphql(`
  mutation RestEnrollMfa($token: String!) {
    enrollMfa(token: $token)
  }
`);

const DisableDoc = graphql(`
  mutation RestDisableMfa($password: String, $token: String) {
    disableMfa(password: $password, token: $token)
  }
`);

const VerifyDoc = graphql(`
  mutation RestVerifyMfa($login: String!, $token: String!) {
    verifyMfa(login: $login, token: $token) {
      login
      code
    }
  }
`);

const LoginEnrollDoc = graphql(`
  mutation RestEnrollMfaAtLogin($login: String!, $token: String!) {
    enrollMfaAtLogin(login: $login, token: $token) {
      login
      code
      recoveryCodes
    }
  }
`);

/** A body field that must be a non-empty string: 400 naming it otherwise. */
function requiredString(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (v === undefined || v === null || v === '') throw badRequest(`${key} is required`, [key]);
  if (typeof v !== 'string') throw badRequest(`${key} must be a string`, [key]);
  return v;
}

/** An optional body field: a string or absent. */
function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`${key} must be a string`, [key]);
  return v;
}

const noStore = (res: express.Response) => res.setHeader('Cache-Control', 'no-store');

/** Adds the /auth/mfa routes to the /auth router; `body` parses a JSON object body (or answers 400). */
export function addMfaRoutes(
  r: Router,
  jsonParser: express.RequestHandler,
  body: (raw: unknown) => Record<string, unknown>,
): void {
  // Medplum's answer: {enrolled}, and while not enrolled the (pending) enrolment to scan.
  r.get(
    '/auth/mfa/status',
    requireAuth,
    asyncHandler(async (req, res) => {
      const ctx = contextFor(req);
      const { mfaStatus } = await runOperation(StatusDoc, {}, ctx);
      noStore(res);
      if (mfaStatus.enrolled) {
        res.json({
          enrolled: true,
          recoveryCodesLeft: mfaStatus.recoveryCodesLeft,
          required: mfaStatus.required,
        });
        return;
      }
      const { startMfaEnrollment } = await runOperation(StartDoc, {}, ctx);
      res.json({ enrolled: false, required: mfaStatus.required, ...startMfaEnrollment });
    }),
  );

  r.post(
    '/auth/mfa/enroll',
    requireAuth,
    jsonParser,
    asyncHandler(async (req, res) => {
      const token = requiredString(body(req.body), 'token');
      const data = await runOperation(EnrollDoc, { token }, contextFor(req));
      noStore(res);
      res.json({ enrolled: true, recoveryCodes: data.enrollMfa });
    }),
  );

  r.post(
    '/auth/mfa/disable',
    requireAuth,
    jsonParser,
    asyncHandler(async (req, res) => {
      const b = body(req.body);
      const password = optionalString(b, 'password');
      const token = optionalString(b, 'token');
      if (password === undefined && token === undefined)
        throw badRequest('password is required (or token: a current code)', ['password']);
      await runOperation(DisableDoc, { password, token }, contextFor(req));
      sendFhir(res, 200, operationOutcome('information', 'informational', 'Second factor disabled'));
    }),
  );

  // No access token: the sign-in's id is what the caller holds.
  r.post(
    '/auth/mfa/verify',
    jsonParser,
    asyncHandler(async (req, res) => {
      const b = body(req.body);
      const login = requiredString(b, 'login');
      const token = requiredString(b, 'token');
      const data = await runOperation(VerifyDoc, { login, token }, contextFor(req));
      noStore(res);
      res.json({ login: data.verifyMfa.login, code: data.verifyMfa.code ?? undefined });
    }),
  );

  r.post(
    '/auth/mfa/login-enroll',
    jsonParser,
    asyncHandler(async (req, res) => {
      const b = body(req.body);
      const login = requiredString(b, 'login');
      const token = requiredString(b, 'token');
      const data = await runOperation(LoginEnrollDoc, { login, token }, contextFor(req));
      const result = data.enrollMfaAtLogin;
      noStore(res);
      res.json({
        login: result.login,
        code: result.code ?? undefined,
        recoveryCodes: result.recoveryCodes ?? undefined,
      });
    }),
  );
}
