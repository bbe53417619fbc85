import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { TestClockSchema } from '../../../shared/api/test-clocks.js';
import { deleteTestClock, getTestClock } from '../../domain/test-clocks/store.js';
import { toTestClock } from './representation.js';

/** GET /v1/test_clocks/:clock_id (admin) — one of the caller's clocks (404 for another account's). */
export function getTestClockRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/test_clocks/:clock_id',
    auth: 'admin',
    handler: async (ctx) =>
      reply.ok(toTestClock(await getTestClock(deps.pg, ctx.principal!.accountId, ctx.params.clock_id!))),
    doc: {
      summary: 'Get a test clock',
      tags: ['test clocks'],
      responses: { '200': { description: 'The clock', schema: TestClockSchema } },
    },
  };
}

/** DELETE /v1/test_clocks/:clock_id (admin) — 204; 409 test_clock_in_use while customers live at it. */
export function deleteTestClockRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'DELETE',
    path: '/v1/test_clocks/:clock_id',
    auth: 'admin',
    handler: async (ctx) => {
      await deleteTestClock(deps.pg, ctx.principal!.accountId, ctx.params.clock_id!);
      return reply.noContent();
    },
    doc: {
      summary: 'Delete a test clock without customers',
      tags: ['test clocks'],
      responses: {
        '204': { description: 'Deleted' },
        '409': { description: 'Customers live at the clock (code test_clock_in_use)' },
      },
    },
  };
}
