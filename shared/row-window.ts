/**
 * The rows a store reads for one page (SQL `LIMIT`/`OFFSET`). Stores take only this; the route turns the
 * request's `page`/`per_page` into it (`pageWindow` in shared/http/pagination.ts).
 */
export interface RowWindow {
  limit: number;
  offset: number;
}
