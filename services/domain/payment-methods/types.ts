/** A stored card: never the number or CVC, only what identifies it to its owner and the processor's token. */
export interface PaymentMethodRow {
  id: string;
  type: 'card';
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  is_default: boolean;
  created_at: Date;
}

/** A verified card about to be stored. */
export interface NewCard {
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  processor: string;
  processorToken: string;
}
