import type { PgPool } from '../../../shared/clients/postgres.js';
import { NotFoundError, PaymentRequiredError, ValidationError } from '../../../shared/errors.js';
import { hmacHex } from '../../../shared/secret.js';
import { CARD_BRANDS } from '../../../shared/vocabulary.js';
import type { PaymentProcessor } from '../payments/processor.js';
import { insertPaymentMethod, setDefaultPaymentMethod } from './store.js';
import type { PaymentMethodRow } from './types.js';

/**
 * Saves a card the processor already tokenised (a Stripe PaymentMethod id from its card element) for the account:
 * the processor sets it up for off-session charges and reports brand, last four digits and expiry, which are
 * stored. The one rule behind POST /v1/billing/payment-methods with `payment_method` and the hosted pages. A
 * decline stores nothing (402); an unknown token is 404. `makeDefault`: the card becomes the account's default
 * (else only the first card is).
 */
export async function saveProcessorCard(
  pg: PgPool,
  o: {
    processor: PaymentProcessor;
    fingerprintKey: Buffer;
    accountId: string;
    token: string;
    maxPaymentMethods: number;
    makeDefault?: boolean;
  },
): Promise<PaymentMethodRow> {
  const p = o.processor;
  if (!p.savePaymentMethod)
    throw new ValidationError(
      [{ field: 'payment_method', message: `the ${p.name} processor takes card details, not tokens` }],
      `This account's cards are charged by the ${p.name} processor, which takes card details (card), not a payment_method token.`,
      'payment_method_unsupported',
    );
  const saved = await p.savePaymentMethod(o.accountId, o.token);
  if (!saved.ok) {
    if (saved.status === 404) throw new NotFoundError(saved.message);
    throw new PaymentRequiredError(saved.code, `${saved.message} Nothing was stored.`);
  }
  const row = await insertPaymentMethod(
    pg,
    o.accountId,
    {
      brand: (CARD_BRANDS as readonly string[]).includes(saved.brand) ? saved.brand : 'unknown',
      last4: saved.last4,
      exp_month: saved.exp_month,
      exp_year: saved.exp_year,
      fingerprint: hmacHex(o.fingerprintKey, `${p.name}:${saved.fingerprint ?? saved.token}`),
      processor: p.name,
      processorToken: saved.token,
    },
    o.maxPaymentMethods,
  );
  return o.makeDefault && !row.is_default ? setDefaultPaymentMethod(pg, o.accountId, row.id) : row;
}
