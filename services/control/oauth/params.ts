import type { RequestContext } from '../../../shared/http/context.js';
import { invalidRequest } from './errors.js';

/**
 * The parameters of a token or revocation request, from a form body (RFC 6749) or a JSON object (as
 * the seed shows). Every value must be a string; a repeated form parameter is an error (RFC 6749 §3.2).
 */
export function requestParams(ctx: RequestContext): Map<string, string> {
  const params = new Map<string, string>();
  if (ctx.body === undefined || ctx.rawBody === undefined)
    throw invalidRequest(
      'The request body is empty; send the parameters as application/x-www-form-urlencoded or JSON.',
    );
  const type = (ctx.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    for (const [k, v] of new URLSearchParams(ctx.rawBody.toString('utf8'))) {
      if (params.has(k)) throw invalidRequest(`The parameter "${k}" is repeated.`);
      params.set(k, v);
    }
    return params;
  }
  if (typeof ctx.body !== 'object' || ctx.body === null || Array.isArray(ctx.body))
    throw invalidRequest('The JSON body must be an object of string parameters.');
  for (const [k, v] of Object.entries(ctx.body as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    if (typeof v !== 'string') throw invalidRequest(`The parameter "${k}" must be a string.`);
    params.set(k, v);
  }
  return params;
}

/** A required, non-empty parameter. */
export function required(params: Map<string, string>, name: string): string {
  const v = params.get(name);
  if (v === undefined || v === '') throw invalidRequest(`The parameter "${name}" is required.`);
  return v;
}
