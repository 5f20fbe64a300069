// Express middleware shared by the routers: async error forwarding, authentication, auth requirement.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { unauthorized } from '../core/errors.js';
import { sendError } from './outcome.js';

/** Wraps an async handler so a rejection reaches the error responder. */
export function asyncHandler(
  fn: (req: Request, res: Response, next: NextFunction) => Promise<void>,
): RequestHandler {
  return (req, res, next) => {
    fn(req, res, next).catch((err: unknown) => sendError(req, res, err));
  };
}

/** Authenticates `Authorization: Bearer` on every request that carries it, then hands the request to `then`;
 * a bad token is a 401 right away. */
export function authenticateThen(then: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const header = req.headers.authorization;
    if (!header || !/^bearer /i.test(header)) {
      req.principal = null;
      then(req, res, next);
      return;
    }
    const token = header.slice(7).trim();
    const cached = req.services.auth.authenticateCached(token);
    if (cached) {
      req.principal = cached;
      req.token = token;
      then(req, res, next);
      return;
    }
    req.services.auth.authenticate(token).then(
      (principal) => {
        req.principal = principal;
        req.token = token;
        then(req, res, next);
      },
      (err: unknown) => sendError(req, res, err),
    );
  };
}

/** 401 unless the request is signed in. */
export const requireAuth: RequestHandler = (req, res, next) => {
  if (!req.principal) {
    sendError(req, res, unauthorized('Authentication required: send Authorization: Bearer <access token>'));
    return;
  }
  next();
};
