import type { MeterRow } from '../../domain/meters/types.js';

/** The API representation (shared/api/meters.ts) of the domain's rows. */

export function toMeter(row: MeterRow) {
  return {
    id: row.id,
    name: row.name,
    unit: row.unit,
    type: row.type,
    aggregation: row.aggregation,
    dimensions: row.dimensions,
    unique_by: row.unique_by,
    status: row.status,
    scope: row.scope,
    key: row.key,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
