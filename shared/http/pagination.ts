import Type from 'typebox';
import type { RowWindow } from '../row-window.js';

/**
 * Pagination is the route layer's business: it validates `page`/`per_page`, turns them into a row window
 * for the store (`pageWindow`), and shapes the reply (`reply.page`). Stores only see `{limit, offset}`.
 */

/** Beyond this no list has rows, and `page=1e300` (an integer to JSON Schema) would overflow the SQL OFFSET. */
export const MAX_PAGE = 1_000_000;

/** `page` 1–1,000,000 (default 1), `per_page` 1–100 (default 20); out of range → 422. */
export const PaginationQuery = {
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: 'page number, from 1 to 1000000' }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'items per page (1–100)' }),
};

export const PaginationSchema = Type.Object(
  { page: Type.Integer(), per_page: Type.Integer(), total: Type.Integer() },
  { additionalProperties: false },
);

/** A validated `?page&per_page`. */
export interface PageRequest {
  page: number;
  per_page: number;
}

export interface Page<T> {
  data: T[];
  pagination: { page: number; per_page: number; total: number };
}

export function pageWindow(p: PageRequest): RowWindow {
  return { limit: p.per_page, offset: (p.page - 1) * p.per_page };
}

export function pageOf<T>(data: T[], p: PageRequest, total: number): Page<T> {
  return { data, pagination: { page: p.page, per_page: p.per_page, total } };
}

/** A list response schema for OpenAPI. */
export function listOf(item: object): object {
  return Type.Object({ data: Type.Array(item as never), pagination: PaginationSchema });
}
