/** The public API's resources (docs/design.md §8), as the console reads them. Money arrives as exact JSON numbers. */
export interface Meter {
  id: string;
  name: string;
  unit: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregation: string;
  status: 'active' | 'inactive';
  /** deployment: one meter of every customer (operator mode). */
  scope?: 'account' | 'deployment';
  created_at: string;
  updated_at: string;
}

/** A customer of the deployment (operator mode): an account, named by the operator's external id. */
export interface Customer {
  id: string;
  account_id: string;
  external_id: string | null;
  name: string;
  email: string | null;
  billing_address: { line1: string; city: string; state: string; zip: string } | null;
  metadata: Record<string, string>;
  created_at: string;
}

export interface UsageWindow {
  start: string;
  end: string;
  value: number | null;
  count: number;
}

export interface UsageReport {
  meter_id: string;
  type: string;
  aggregation: string;
  unit: string;
  start_date: string;
  end_date: string;
  window: string;
  value: number | null;
  count: number;
  data: UsageWindow[];
}

export interface Product {
  id: string;
  name: string;
  price: number;
  currency: string;
  pricing: 'flat' | 'metered';
  created_at: string;
  updated_at: string;
}

export interface Subscription {
  id: string;
  status: 'active' | 'canceled';
  items: { product_id: string; meter_id: string | null }[];
  currency: string;
  current_period_start: string;
  current_period_end: string;
  created_at: string;
}

export interface InvoiceLine {
  product_id: string;
  meter_id: string | null;
  description: string;
  quantity: number;
  unit_price: number;
  amount: number;
}

export interface Invoice {
  id: string | null;
  customer_id: string;
  subscription_id: string;
  status: 'draft' | 'open' | 'paid' | 'uncollectible' | 'void';
  currency: string;
  amount: number;
  period_start: string;
  period_end: string;
  lines: InvoiceLine[];
  attempt_count: number;
  next_payment_attempt_at?: string | null;
  last_payment_error?: unknown;
  created_at: string | null;
  paid_at: string | null;
}

export interface PaymentMethod {
  id: string;
  type: 'card';
  card: { brand: string; last4: string; exp_month: number; exp_year: number };
  is_default: boolean;
  created_at: string;
}

export const WEBHOOK_EVENTS = [
  'invoice.created',
  'invoice.paid',
  'invoice.voided',
  'payment.failed',
  'credit_note.created',
  'subscription.updated',
  'meter.usage.recorded',
] as const;

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  created_at: string;
  updated_at: string;
  /** Only in the 201 answer, when the server generated it. */
  secret?: string;
}

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: 'pending' | 'succeeded' | 'failed';
  response_status: number | null;
  error: string | null;
  duration_ms?: number | null;
  created_at: string;
  next_attempt_at: string | null;
}

export interface Billing {
  customer_id: string;
  payment_method: { id: string; type: string; last4: string; brand: string } | null;
  billing_address: { line1: string; city: string; state: string; zip: string } | null;
}
