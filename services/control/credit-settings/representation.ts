import { JsonDecimal } from '../../../shared/money/json.js';
import type { WalletSettings } from '../../domain/credits/wallet-store.js';

/** The API representation (shared/api/credit-settings.ts) of a wallet's settings and status. */
export function toCreditSettings(
  customerId: string,
  w: WalletSettings | null,
  status: { thisMonth: number; inFlight: boolean; balance: string },
) {
  const enabled = w?.recharge_threshold != null;
  return {
    customer_id: customerId,
    currency: w?.currency ?? null,
    balance: new JsonDecimal(status.balance),
    auto_recharge:
      w && enabled
        ? {
            enabled: w.auto_recharge_enabled,
            threshold: new JsonDecimal(w.recharge_threshold!),
            amount: new JsonDecimal(w.recharge_amount!),
            max_per_month: w.max_recharges_per_month!,
            top_ups_this_month: status.thisMonth,
            in_flight: status.inFlight,
            last_failure:
              w.last_failure_code && w.last_failure_at
                ? { code: w.last_failure_code, at: w.last_failure_at.toISOString() }
                : null,
          }
        : null,
    low_balance_threshold: w?.low_balance_threshold != null ? new JsonDecimal(w.low_balance_threshold) : null,
  };
}
