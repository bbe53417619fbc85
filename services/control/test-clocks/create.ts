import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateTestClockBody, TestClockSchema } from '../../../shared/api/test-clocks.js';
import type { NewTestClock } from '../../domain/test-clocks/types.js';
import { insertTestClock } from '../../domain/test-clocks/store.js';
import { toTestClock } from './representation.js';
import { parseNewTestClock } from './input.js';

/** POST /v1/test_clocks (admin) — a clock of the caller's operator account, at frozen_time. */
export function createTestClockRoute(deps: ApiDeps): RouteDef<NewTestClock> {
  return {
    method: 'POST',
    path: '/v1/test_clocks',
    auth: 'admin',
    input: parseNewTestClock,
    handler: async (_ctx, clock) => {
      const row = await insertTestClock(deps.pg, clock);
      return reply.created(toTestClock(row), `/v1/test_clocks/${row.id}`);
    },
    doc: {
      summary: 'Create a test clock: a simulated time that customers put on it live at',
      tags: ['test clocks'],
      requestBody: CreateTestClockBody,
      responses: { '201': { description: 'The clock (Location names it)', schema: TestClockSchema } },
    },
  };
}
