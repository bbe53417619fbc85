import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListTestClocksQuery, TestClockListSchema } from '../../../shared/api/test-clocks.js';
import { listTestClocks } from '../../domain/test-clocks/store.js';
import { toTestClock } from './representation.js';
import { parseListTestClocks } from './input.js';

/** GET /v1/test_clocks?page&per_page (admin) — the caller's clocks, newest first. */
export function listTestClocksRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/test_clocks',
    auth: 'admin',
    input: parseListTestClocks,
    handler: async (ctx, page) => {
      const { rows, total } = await listTestClocks(deps.pg, ctx.principal!.accountId, pageWindow(page));
      return reply.page(rows.map(toTestClock), page, total);
    },
    doc: {
      summary: 'List test clocks (newest first)',
      tags: ['test clocks'],
      query: ListTestClocksQuery,
      responses: { '200': { description: 'A page of clocks', schema: TestClockListSchema } },
    },
  };
}
