/**
 * An error response for OpenAPI docs beyond the ones the generator adds to every operation (400, 401,
 * 403, 404, 409, 413, 415, 422: services/control/openapi/document.ts): an RFC 9457 problem document.
 */
export function problemResponse(description: string): { description: string; schema: object; contentType: string } {
  return { description, schema: { $ref: '#/components/schemas/Problem' }, contentType: 'application/problem+json' };
}
