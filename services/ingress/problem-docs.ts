import { problemResponse } from '../../shared/http/problems.js';

/** OpenAPI descriptions of the RFC 9457 problem documents the usage routes answer with. */

const DESCRIPTIONS: Record<string, string> = {
  '400': 'malformed JSON (`malformed_json`)',
  '401': 'missing, invalid or expired bearer token (`unauthorized`)',
  '403':
    'the token lacks the needed scope (`insufficient_scope`), or a customer’s token records a deployment gauge or histogram, which only the operator reports (`operator_reported_meter`)',
  '404': 'no such meter in this account (`not_found`)',
  '409': 'the meter is inactive (`meter_inactive`)',
  '413': 'body over 1 MiB (`payload_too_large`)',
  '415': 'body is not application/json (`unsupported_media_type`)',
  '422':
    'invalid input; `errors` names each failing field, `[index].field` in batches (`validation_failed`; `value_out_of_range` for a value no meter can store exactly)',
  '429':
    "over the account's usage records per second (a batch of 100 counts 100); nothing was recorded; `Retry-After`, `RateLimit-Policy` and `RateLimit` say when (`rate_limited`)",
  '503':
    'NATS could not store the records (down, slow or full); nothing was recorded; retry after `Retry-After` (`unavailable`)',
};

export function problemResponses(
  statuses: string[],
): Record<string, { description: string; schema: object; contentType: string }> {
  const all = ['400', '401', '403', '413', '415', ...statuses];
  return Object.fromEntries(all.map((s) => [s, problemResponse(DESCRIPTIONS[s]!)]));
}
