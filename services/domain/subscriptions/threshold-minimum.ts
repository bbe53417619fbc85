import { ValidationError } from '../../../shared/errors.js';
import { Decimal } from '../../../shared/money/decimal.js';
import { thresholdMinimum, type ThresholdMinimums } from '../../../shared/money/threshold-minimums.js';

/**
 * A billing_threshold is at least the currency's minimum (BILLING_THRESHOLD_MINIMUMS; default 1 of its major unit):
 * 422 `threshold_below_minimum` naming `billing_threshold.amount`. Called wherever a threshold is set — creation and
 * PATCH — inside the write's transaction, once the subscription's currency is known.
 */
export function checkThresholdMinimum(amount: string | null, currency: string, minimums: ThresholdMinimums): void {
  if (amount === null) return;
  const minimum = thresholdMinimum(currency, minimums);
  if (new Decimal(amount).lt(minimum))
    throw new ValidationError(
      [{ field: 'billing_threshold.amount', message: `must be at least ${minimum} ${currency}` }],
      undefined,
      'threshold_below_minimum',
    );
}
