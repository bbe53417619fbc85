import { withTransaction, type PgClient, type PgPool } from '../../../shared/clients/postgres.js';

/**
 * A billing pass batch by batch (advance, threshold, draft and close passes): each batch in a transaction of its
 * own that locks its rows FOR UPDATE SKIP LOCKED (concurrent passes split the work), until a batch finds nothing
 * left to lock (null). `onBatch` hears of each batch that issued something (the run wakes its payment pass).
 * Collects into `into` (the close's concurrent passes share one list).
 */
export async function inBatches<T>(
  pg: PgPool,
  batch: (client: PgClient) => Promise<T[] | null>,
  onBatch?: (done: T[]) => void,
  into: T[] = [],
): Promise<T[]> {
  for (;;) {
    const done = await withTransaction(pg, batch);
    if (done === null) return into;
    into.push(...done);
    if (done.length) onBatch?.(done);
  }
}
