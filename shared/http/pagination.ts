import Type from 'typebox';

/** `page` ≥ 1 (default 1), `per_page` 1–100 (default 20); out of range → 422. */
export const PaginationQuery = {
  page: Type.Integer({ minimum: 1, default: 1, description: 'page number, from 1' }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'items per page (1–100)' }),
};

export const PaginationSchema = Type.Object(
  { page: Type.Integer(), per_page: Type.Integer(), total: Type.Integer() },
  { additionalProperties: false },
);

export interface Page<T> {
  data: T[];
  pagination: { page: number; per_page: number; total: number };
}

export function pageOf<T>(data: T[], page: number, perPage: number, total: number): Page<T> {
  return { data, pagination: { page, per_page: perPage, total } };
}

/** SQL `LIMIT $n OFFSET $m` values for a page. */
export function limitOffset(page: number, perPage: number): [number, number] {
  return [perPage, (page - 1) * perPage];
}

/** A list response schema for OpenAPI. */
export function listOf(item: object): object {
  return Type.Object({ data: Type.Array(item as never), pagination: PaginationSchema });
}
