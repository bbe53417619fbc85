import type { TestClockRow } from '../../domain/test-clocks/types.js';

/** The API representation (shared/api/test-clocks.ts) of the domain's rows. */
export function toTestClock(r: TestClockRow) {
  return {
    id: r.id,
    name: r.name,
    frozen_time: r.frozen_time.toISOString(),
    status: r.status,
    customer_ids: r.customer_ids,
    created_at: r.created_at.toISOString(),
  };
}
