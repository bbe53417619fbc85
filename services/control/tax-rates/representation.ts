import { JsonDecimal } from '../../../shared/money/json.js';
import type { TaxRateRow } from '../../domain/tax/types.js';

/** A tax rate as the API shows it; the percentage as an exact JSON number. */
export function toTaxRate(r: TaxRateRow) {
  return {
    id: r.id,
    name: r.name,
    percentage: new JsonDecimal(r.percentage),
    country: r.country,
    region: r.region,
    inclusive: r.inclusive,
    archived: r.archived_at !== null,
    created_at: r.created_at.toISOString(),
  };
}
