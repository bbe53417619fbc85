import Type from 'typebox';
import type { DomainError, FieldError } from '../errors.js';
import type { HttpReply } from './context.js';

/**
 * Domain errors → RFC 9457 problem documents: the one problem-document schema (OpenAPI's
 * `#/components/schemas/Problem`) and the one renderer. Status and title come from the kind table in
 * shared/errors.ts.
 */
export const ProblemSchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  code: Type.String({ description: 'stable snake_case error code' }),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  request_id: Type.String(),
});

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
  request_id: string;
}

export function toProblem(err: DomainError, requestId: string): ProblemDocument {
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

/** The problem response for an error: status from the table, `application/problem+json`, the error's headers. */
export function problemReply(err: DomainError, requestId: string): HttpReply {
  return {
    status: err.status,
    raw: JSON.stringify(toProblem(err, requestId)),
    contentType: 'application/problem+json',
    headers: err.headers,
  };
}

/** An error response in a route's OpenAPI `doc`: a problem document (the shared component). */
export function problemResponse(description: string): { description: string; schema: object; contentType: string } {
  return { description, schema: { $ref: '#/components/schemas/Problem' }, contentType: 'application/problem+json' };
}
