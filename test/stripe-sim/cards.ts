/**
 * Stripe's documented test cards, as the simulator treats them. `attach` = what adding the card (attach or a
 * SetupIntent) does; `charge` = what an off-session PaymentIntent does; `threeDS` = when 3-D Secure is asked for.
 */
export interface TestCard {
  number: string;
  brand: 'visa' | 'mastercard' | 'amex';
  /** Declined when attached or set up (Stripe's generic decline cards cannot be attached). */
  attachDecline?: Decline;
  /** Declined when charged. */
  chargeDecline?: Decline;
  /** 'setup': 3-D Secure when set up or paid on-session; off-session needs it unless the card was set up. 'always': every payment. */
  threeDS?: 'setup' | 'always';
}

export interface Decline {
  code: string;
  decline_code?: string;
  message: string;
}

const generic: Decline = { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' };

export const TEST_CARDS: TestCard[] = [
  { number: '4242424242424242', brand: 'visa' },
  { number: '5555555555554444', brand: 'mastercard' },
  { number: '378282246310005', brand: 'amex' },
  { number: '4000000000000002', brand: 'visa', attachDecline: generic, chargeDecline: generic },
  {
    number: '4000000000009995',
    brand: 'visa',
    chargeDecline: {
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    },
  },
  {
    number: '4000000000000069',
    brand: 'visa',
    chargeDecline: { code: 'expired_card', decline_code: 'expired_card', message: 'Your card has expired.' },
  },
  // "Decline after attaching": added fine, every charge declined.
  { number: '4000000000000341', brand: 'visa', chargeDecline: generic },
  { number: '4000002500003155', brand: 'visa', threeDS: 'setup' },
  { number: '4000002760003184', brand: 'visa', threeDS: 'always' },
];

/** The `pm_card_*` and `tok_*` shortcuts Stripe accepts in test mode, to the card they stand for. */
export const CARD_SHORTCUTS: Record<string, string> = {
  visa: '4242424242424242',
  mastercard: '5555555555554444',
  amex: '378282246310005',
  chargeDeclined: '4000000000000002',
  chargeDeclinedInsufficientFunds: '4000000000009995',
  chargeDeclinedExpiredCard: '4000000000000069',
  chargeCustomerFail: '4000000000000341',
  authenticationRequiredOnSetup: '4000002500003155',
  authenticationRequired: '4000002760003184',
  threeDSecure2Required: '4000002760003184',
};

export function cardByNumber(number: string): TestCard | undefined {
  return TEST_CARDS.find((c) => c.number === number);
}

/** `pm_card_visa` / `tok_visa` → the card's number, or undefined. */
export function shortcutNumber(id: string): string | undefined {
  const m = /^(?:pm_card|tok)_(.+)$/.exec(id);
  return m ? CARD_SHORTCUTS[m[1]!] : undefined;
}
