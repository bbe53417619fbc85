/**
 * The one error hierarchy. Stores, services and handlers throw these; they say what went wrong in the
 * domain's words (not found, conflict, invalid field) and carry a stable snake_case `code`. No code that
 * throws one picks an HTTP status: `PROBLEM_TABLE` below maps each kind to its status and title, and
 * shared/http/problems.ts renders the RFC 9457 problem document. Anything else thrown becomes a 500
 * without details.
 */
export interface FieldError {
  field: string;
  message: string;
}

/** Every kind of failure the API reports; the problem table has one row per kind. */
export type ErrorKind =
  | 'bad_request'
  | 'malformed_json'
  | 'validation'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'payment_required'
  | 'rate_limited'
  | 'unavailable'
  | 'upgrade_required'
  | 'internal';

/** Kind → HTTP status and problem title: the only place an error's status is decided. */
export const PROBLEM_TABLE: Readonly<Record<ErrorKind, { status: number; title: string }>> = {
  bad_request: { status: 400, title: 'Bad Request' },
  malformed_json: { status: 400, title: 'Malformed JSON' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  payment_required: { status: 402, title: 'Payment Required' },
  insufficient_scope: { status: 403, title: 'Insufficient Scope' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  request_timeout: { status: 408, title: 'Request Timeout' },
  conflict: { status: 409, title: 'Conflict' },
  payload_too_large: { status: 413, title: 'Payload Too Large' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  validation: { status: 422, title: 'Validation Failed' },
  upgrade_required: { status: 426, title: 'Upgrade Required' },
  rate_limited: { status: 429, title: 'Too Many Requests' },
  internal: { status: 500, title: 'Internal Server Error' },
  unavailable: { status: 503, title: 'Service Unavailable' },
};

export class DomainError extends Error {
  readonly headers: Record<string, string>;
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    detail: string,
    readonly errors?: FieldError[],
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'DomainError';
    this.headers = headers;
  }
  get detail(): string {
    return this.message;
  }
  get status(): number {
    return PROBLEM_TABLE[this.kind].status;
  }
  get title(): string {
    return PROBLEM_TABLE[this.kind].title;
  }
}

/** The request is wrong as a whole (not one field of it). */
export class BadRequestError extends DomainError {
  constructor(detail: string, code = 'bad_request', errors?: FieldError[]) {
    super('bad_request', code, detail, errors);
  }
}

export class MalformedJsonError extends DomainError {
  constructor(detail = 'The request body is not valid JSON.') {
    super('malformed_json', 'malformed_json', detail);
  }
}

/** One or more fields are invalid; `errors` names each (`items[0].product_id`). */
export class ValidationError extends DomainError {
  constructor(errors: FieldError[], detail?: string, code = 'validation_failed') {
    super('validation', code, detail ?? summarize(errors), errors);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(detail = 'A valid bearer token is required.', bearerError?: 'invalid_token' | 'invalid_request') {
    const challenge = bearerError
      ? `Bearer realm="meterline", error="${bearerError}", error_description="${detail.replace(/"/g, "'")}"`
      : 'Bearer realm="meterline"';
    super('unauthorized', 'unauthorized', detail, undefined, { 'WWW-Authenticate': challenge });
  }
}

export class InsufficientScopeError extends DomainError {
  constructor(readonly requiredScope: string) {
    super('insufficient_scope', 'insufficient_scope', `This operation needs the "${requiredScope}" scope.`, undefined, {
      'WWW-Authenticate': `Bearer realm="meterline", error="insufficient_scope", scope="${requiredScope}"`,
    });
  }
}

/**
 * The caller may see the resource but not make this change, whatever its token's scope (e.g. a subscription's
 * terms the operator set, issue 49); `errors` names the fields refused.
 */
export class ForbiddenError extends DomainError {
  constructor(detail: string, code: string, errors?: FieldError[]) {
    super('forbidden', code, detail, errors);
  }
}

/** A customer's token recording usage of a deployment meter only the operator reports (meters/record.ts operatorReported). */
export const OPERATOR_REPORTED_METER = 'operator_reported_meter';
export class OperatorReportedMeterError extends DomainError {
  constructor(meterId: string) {
    super('insufficient_scope', OPERATOR_REPORTED_METER, operatorReportedDetail(meterId), undefined, {
      'WWW-Authenticate': 'Bearer realm="meterline", error="insufficient_scope", scope="admin"',
    });
  }
}
export const operatorReportedDetail = (meterId: string) =>
  `Meter ${meterId} is a deployment gauge or histogram: only the operator (an admin token) records its usage.`;

/** No such resource — or one of another account, which must look exactly the same. */
export class NotFoundError extends DomainError {
  constructor(detail = 'The requested resource does not exist.') {
    super('not_found', 'not_found', detail);
  }
}

export class MethodNotAllowedError extends DomainError {
  constructor(allowed: string[]) {
    super('method_not_allowed', 'method_not_allowed', `Allowed methods: ${allowed.join(', ')}.`, undefined, {
      Allow: allowed.join(', '),
    });
  }
}

/** The request is valid but the resource's state forbids it; `code` says which rule (`product_in_use`). */
export class ConflictError extends DomainError {
  constructor(detail: string, code = 'conflict', errors?: FieldError[]) {
    super('conflict', code, detail, errors);
  }
}

export class PayloadTooLargeError extends DomainError {
  constructor(limit: number) {
    super('payload_too_large', 'payload_too_large', `The request body exceeds ${limit} bytes.`);
  }
}

/** The body did not arrive in full within BODY_READ_TIMEOUT_SECONDS; nothing was done. */
export class RequestTimeoutError extends DomainError {
  constructor(seconds: number) {
    super(
      'request_timeout',
      'request_timeout',
      `The request body did not arrive in full within ${seconds} s; nothing was done. Send it again at once.`,
    );
  }
}

/** The client closed the connection before its body arrived: nothing is done, and nobody is told. */
export class RequestAbortedError extends DomainError {
  constructor() {
    super('bad_request', 'request_aborted', 'The client closed the connection before the body arrived.');
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  constructor(accepted: string[]) {
    super('unsupported_media_type', 'unsupported_media_type', `Send the body as ${accepted.join(' or ')}.`);
  }
}

/** A charge cannot be made (`card_declined`, `no_payment_method`). */
export class PaymentRequiredError extends DomainError {
  constructor(code: string, detail: string) {
    super('payment_required', code, detail);
  }
}

/** Over a per-account rate; `headers` carry Retry-After and the IETF RateLimit-Policy / RateLimit fields. */
export class RateLimitedError extends DomainError {
  constructor(detail: string, headers: Record<string, string>) {
    super('rate_limited', 'rate_limited', detail, undefined, headers);
  }
}

/**
 * This account already has as many requests of one kind running and queued as it may (usage reads): 503 with
 * Retry-After, as for a full queue anywhere — nothing was done; the same request later succeeds.
 */
export class BusyError extends DomainError {
  constructor(detail: string, retryAfterSeconds = 1) {
    super('unavailable', 'busy', detail, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** A dependency is down or full; nothing was done; retry after `Retry-After`. */
export class UnavailableError extends DomainError {
  constructor(detail: string, retryAfterSeconds = 1) {
    super('unavailable', 'unavailable', detail, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** A WebSocket endpoint asked for without the upgrade handshake. */
export class UpgradeRequiredError extends DomainError {
  constructor(detail: string) {
    super('upgrade_required', 'upgrade_required', detail, undefined, { Upgrade: 'websocket', Connection: 'Upgrade' });
  }
}

/** Too much is being taken in at once (request bodies buffered); nothing was done; retry shortly. */
export class OverloadedError extends DomainError {
  constructor(detail = 'The server is taking in too much at once; retry shortly.', retryAfterSeconds = 1) {
    super('unavailable', 'overloaded', detail, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** What an unexpected exception becomes on the wire: no details (they are logged). */
export const INTERNAL_ERROR = (): DomainError =>
  new DomainError('internal', 'internal_error', 'Something went wrong on our side; it has been logged.');

function summarize(errors: FieldError[]): string {
  if (errors.length === 0) return 'The request is invalid.';
  const first = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return `${first.field ? first.field + ': ' : ''}${first.message}${more}`;
}
