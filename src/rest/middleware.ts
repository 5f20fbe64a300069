// Express middleware shared by the routers: async error forwarding, authentication, auth requirement.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { signInRequired } from '../core/caller.js';
import { sendError } from './outcome.js';

/** Wraps an async handler so a rejection reaches the error responder. */
export function asyncHandler(
  fn: (req: Request, res: Response, next: NextFunction) => Promise<void>,
): RequestHandler {
  return (req, res, next) => {
    fn(req, res, next).catch((err: unknown) => sendError(req, res, err));
  };
}

/** Authenticates `Authorization: Bearer` when the request carries it, then continues; a bad token is a 401 right
 * away. Called by the front middleware. */
export const authenticate: RequestHandler = (req, res, next) => {
  const header = req.headers.authorization;
  if (!header || !/^bearer /i.test(header)) {
    req.principal = null;
    next();
    return;
  }
  const token = header.slice(7).trim();
  const cached = req.api.authenticateCached(token);
  if (cached) {
    req.principal = cached;
    req.token = token;
    next();
    return;
  }
  req.api.authenticate(token).then(
    (principal) => {
      req.principal = principal;
      req.token = token;
      next();
    },
    (err: unknown) => sendError(req, res, err),
  );
};

/** 401 unless the request is signed in. */
export const requireAuth: RequestHandler = (req, res, next) => {
  if (!req.principal) {
    sendError(req, res, signInRequired());
    return;
  }
  next();
};
