import type { HttpReply } from '../../../shared/http/context.js';
import { jsonReply } from '../../../shared/http/reply.js';

/** RFC 6749 §5.2 / RFC 7009 §2.2.1 error codes. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type'
  | 'temporarily_unavailable';

/** Token responses and their errors must never be cached (RFC 6749 §5.1). */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

/** invalid_client: 401 with a Basic challenge, telling the client how it may authenticate. */
export function invalidClient(description: string): OAuthError {
  return new OAuthError('invalid_client', description, 401, {
    'WWW-Authenticate': 'Basic realm="meterline", charset="UTF-8"',
  });
}

export const invalidRequest = (description: string) => new OAuthError('invalid_request', description);
export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** `{error, error_description}` as JSON, never the problem+json envelope of /v1. */
export function oauthErrorReply(err: OAuthError): HttpReply {
  return jsonReply(
    err.status,
    { error: err.error, error_description: err.description },
    { ...NO_STORE, ...err.headers },
  );
}

/** Runs an OAuth endpoint: OAuthErrors become RFC 6749 error bodies; anything else stays a 500. */
export async function oauthEndpoint(fn: () => Promise<HttpReply>): Promise<HttpReply> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OAuthError) return oauthErrorReply(err);
    throw err;
  }
}
