import { JsonDecimal } from '../../../shared/money/json.js';
import type { AlertRow } from '../../domain/alerts/types.js';

/** An alert as the API shows it; thresholds as exact JSON numbers. */
export function toAlert(r: AlertRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    metric: r.metric,
    meter_id: r.meter_id,
    currency: r.currency,
    thresholds: r.thresholds.map((t) => new JsonDecimal(t)),
    created_at: r.created_at.toISOString(),
  };
}
