// OAuth2 errors (RFC 6749 section 5.2): the REST layer answers {error, error_description} with the status.
import { ApiError, type IssueCode } from './errors.js';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_token'
  | 'unsupported_token_type';

/** An OAuth2 error with its RFC 6749 code. */
export class OAuthError extends ApiError {
  constructor(
    public readonly oauthCode: OAuthErrorCode,
    description: string,
    status = oauthCode === 'invalid_client' ? 401 : 400,
  ) {
    const issue: IssueCode = status === 401 ? 'login' : 'invalid';
    super(status, issue, description, { oauthError: oauthCode });
  }
}
