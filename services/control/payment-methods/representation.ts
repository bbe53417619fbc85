import type { PaymentMethodRow } from '../../domain/payment-methods/types.js';
import type { PaymentMethod } from '../../../shared/api/payment-methods.js';

/** The API representation. */
export function toPaymentMethod(r: PaymentMethodRow): PaymentMethod {
  return {
    id: r.id,
    type: r.type,
    card: { brand: r.brand, last4: r.last4, exp_month: r.exp_month, exp_year: r.exp_year },
    is_default: r.is_default,
    created_at: r.created_at.toISOString(),
  };
}
