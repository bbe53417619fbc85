/**
 * One error hierarchy for every HTTP route. Handlers throw these; the HTTP layer renders
 * them as RFC 9457 problem documents. Anything else thrown becomes a 500 without details.
 */
export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly headers: Record<string, string>;
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail?: string,
    readonly errors?: FieldError[],
    headers: Record<string, string> = {},
  ) {
    super(detail ?? title);
    this.name = 'ApiError';
    this.headers = headers;
  }
  get detail(): string {
    return this.message;
  }
}

export class BadRequestError extends ApiError {
  constructor(detail: string, code = 'bad_request', errors?: FieldError[]) {
    super(400, code, 'Bad Request', detail, errors);
  }
}

export class MalformedJsonError extends ApiError {
  constructor(detail = 'The request body is not valid JSON.') {
    super(400, 'malformed_json', 'Malformed JSON', detail);
  }
}

export class ValidationError extends ApiError {
  constructor(errors: FieldError[], detail?: string) {
    super(422, 'validation_failed', 'Validation Failed', detail ?? summarize(errors), errors);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(detail = 'A valid bearer token is required.', bearerError?: 'invalid_token' | 'invalid_request') {
    const challenge = bearerError
      ? `Bearer realm="meterline", error="${bearerError}", error_description="${detail.replace(/"/g, "'")}"`
      : 'Bearer realm="meterline"';
    super(401, 'unauthorized', 'Unauthorized', detail, undefined, { 'WWW-Authenticate': challenge });
  }
}

export class InsufficientScopeError extends ApiError {
  constructor(readonly requiredScope: string) {
    super(403, 'insufficient_scope', 'Insufficient Scope', `This operation needs the "${requiredScope}" scope.`, undefined, {
      'WWW-Authenticate': `Bearer realm="meterline", error="insufficient_scope", scope="${requiredScope}"`,
    });
  }
}

export class ForbiddenError extends ApiError {
  constructor(detail: string) {
    super(403, 'forbidden', 'Forbidden', detail);
  }
}

export class NotFoundError extends ApiError {
  constructor(detail = 'The requested resource does not exist.') {
    super(404, 'not_found', 'Not Found', detail);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(allowed: string[]) {
    super(405, 'method_not_allowed', 'Method Not Allowed', `Allowed methods: ${allowed.join(', ')}.`, undefined, {
      Allow: allowed.join(', '),
    });
  }
}

export class ConflictError extends ApiError {
  constructor(detail: string, code = 'conflict', errors?: FieldError[]) {
    super(409, code, 'Conflict', detail, errors);
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(limit: number) {
    super(413, 'payload_too_large', 'Payload Too Large', `The request body exceeds ${limit} bytes.`);
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor(accepted: string[]) {
    super(415, 'unsupported_media_type', 'Unsupported Media Type', `Send the body as ${accepted.join(' or ')}.`);
  }
}

export class PaymentRequiredError extends ApiError {
  constructor(code: string, detail: string) {
    super(402, code, 'Payment Required', detail);
  }
}

export class RateLimitedError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(429, 'rate_limited', 'Too Many Requests', 'Slow down and retry later.', undefined, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

export class UnavailableError extends ApiError {
  constructor(detail: string, retryAfterSeconds = 1) {
    super(503, 'unavailable', 'Service Unavailable', detail, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}

function summarize(errors: FieldError[]): string {
  if (errors.length === 0) return 'The request is invalid.';
  const first = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return `${first.field ? first.field + ': ' : ''}${first.message}${more}`;
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
  request_id: string;
}

export function toProblem(err: ApiError, requestId: string): ProblemDocument {
  const doc: ProblemDocument = {
    type: `https://meterline.dev/problems/${err.code.replace(/_/g, '-')}`,
    title: err.title,
    status: err.status,
    detail: err.detail,
    code: err.code,
    request_id: requestId,
  };
  if (err.errors && err.errors.length) doc.errors = err.errors;
  return doc;
}

export const INTERNAL_ERROR = (): ApiError =>
  new ApiError(500, 'internal_error', 'Internal Server Error', 'Something went wrong on our side; it has been logged.');
