import { createHash } from 'node:crypto';
import type { TestCard } from './cards.js';
import { newId, nowSeconds, type StripeObject } from './state.js';

/** Object builders in the shapes of Stripe's API (and of the `stripe` package's types). */

type Meta = Record<string, string>;

const address = { city: null, country: null, line1: null, line2: null, postal_code: null, state: null };

export function customer(p: { email?: string; name?: string; description?: string; metadata: Meta }): StripeObject {
  const id = newId('cus');
  return {
    id,
    object: 'customer',
    address: null,
    balance: 0,
    created: nowSeconds(),
    currency: null,
    default_source: null,
    delinquent: false,
    description: p.description ?? null,
    discount: null,
    email: p.email ?? null,
    invoice_prefix: id.slice(4, 12).toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    metadata: p.metadata,
    name: p.name ?? null,
    next_invoice_sequence: 1,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
}

export function paymentMethod(card: TestCard, exp: { month: number; year: number }, metadata: Meta): StripeObject {
  return {
    id: newId('pm'),
    object: 'payment_method',
    allow_redisplay: 'unspecified',
    billing_details: { address, email: null, name: null, phone: null, tax_id: null },
    card: {
      brand: card.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
      country: 'US',
      display_brand: card.brand,
      exp_month: exp.month,
      exp_year: exp.year,
      fingerprint: createHash('sha256').update(card.number).digest('base64url').slice(0, 16),
      funding: 'credit',
      generated_from: null,
      last4: card.number.slice(-4),
      networks: { available: [card.brand], preferred: null },
      regulated_status: 'unregulated',
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created: nowSeconds(),
    customer: null,
    livemode: false,
    metadata,
    type: 'card',
  };
}

export function setupIntent(p: {
  customer: string | null;
  payment_method: string | null;
  metadata: Meta;
  usage: string;
}): StripeObject {
  const id = newId('seti');
  return {
    id,
    object: 'setup_intent',
    application: null,
    automatic_payment_methods: null,
    cancellation_reason: null,
    client_secret: `${id}_secret_${newId('x').slice(2)}`,
    created: nowSeconds(),
    customer: p.customer,
    description: null,
    flow_directions: null,
    last_setup_error: null,
    latest_attempt: null,
    livemode: false,
    mandate: null,
    metadata: p.metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: p.payment_method,
    payment_method_configuration_details: null,
    payment_method_options: { card: { mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    single_use_mandate: null,
    status: p.payment_method ? 'requires_confirmation' : 'requires_payment_method',
    usage: p.usage,
  };
}

export function paymentIntent(p: {
  amount: number;
  currency: string;
  customer: string | null;
  payment_method: string | null;
  description: string | null;
  metadata: Meta;
}): StripeObject {
  const id = newId('pi');
  return {
    id,
    object: 'payment_intent',
    allowed_payment_method_types: null,
    amount: p.amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: 'automatic',
    client_secret: `${id}_secret_${newId('x').slice(2)}`,
    confirmation_method: 'automatic',
    created: nowSeconds(),
    currency: p.currency,
    customer: p.customer,
    customer_account: null,
    description: p.description,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    managed_payments: null,
    metadata: p.metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: p.payment_method,
    payment_method_configuration_details: null,
    payment_method_options: {
      card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' },
    },
    payment_method_types: ['card'],
    payment_record: null,
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: p.payment_method ? 'requires_confirmation' : 'requires_payment_method',
    transfer_data: null,
    transfer_group: null,
  };
}

export function charge(
  pi: StripeObject,
  pm: StripeObject,
  failure: { code: string; message: string; decline_code?: string } | null,
): StripeObject {
  const card = pm.card as Record<string, unknown>;
  const ok = failure === null;
  return {
    id: newId('ch'),
    object: 'charge',
    amount: pi.amount,
    amount_captured: ok ? pi.amount : 0,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: ok ? newId('txn') : null,
    billing_details: pm.billing_details,
    calculated_statement_descriptor: 'METERLINE',
    captured: ok,
    created: nowSeconds(),
    currency: pi.currency,
    customer: pi.customer,
    description: pi.description,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: failure?.code ?? null,
    failure_message: failure?.message ?? null,
    fraud_details: {},
    livemode: false,
    metadata: pi.metadata,
    on_behalf_of: null,
    outcome: ok
      ? {
          network_status: 'approved_by_network',
          reason: null,
          risk_level: 'normal',
          seller_message: 'Payment complete.',
          type: 'authorized',
        }
      : {
          network_status: 'declined_by_network',
          reason: failure.decline_code ?? null,
          risk_level: 'normal',
          seller_message: 'The bank did not return any further details with this decline.',
          type: 'issuer_declined',
        },
    paid: ok,
    payment_intent: pi.id,
    payment_method: pm.id,
    payment_method_details: {
      card: {
        brand: card.brand,
        checks: card.checks,
        country: card.country,
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        fingerprint: card.fingerprint,
        funding: card.funding,
        last4: card.last4,
        network: card.brand,
        three_d_secure: null,
        wallet: null,
      },
      type: 'card',
    },
    receipt_email: null,
    receipt_number: null,
    receipt_url: null,
    refunded: false,
    review: null,
    shipping: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: ok ? 'succeeded' : 'failed',
    transfer_data: null,
    transfer_group: null,
  };
}

export function refund(ch: StripeObject, amount: number, metadata: Meta, reason: string | null): StripeObject {
  return {
    id: newId('re'),
    object: 'refund',
    amount,
    balance_transaction: newId('txn'),
    charge: ch.id,
    created: nowSeconds(),
    currency: ch.currency,
    destination_details: {
      card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' },
      type: 'card',
    },
    metadata,
    payment_intent: ch.payment_intent,
    reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
  };
}

export function dispute(ch: StripeObject, reason: string): StripeObject {
  return {
    id: newId('dp'),
    object: 'dispute',
    amount: ch.amount,
    balance_transactions: [],
    charge: ch.id,
    created: nowSeconds(),
    currency: ch.currency,
    enhanced_eligibility_types: [],
    evidence: {},
    evidence_details: { due_by: nowSeconds() + 7 * 86400, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: ch.payment_intent,
    reason,
    status: 'needs_response',
  };
}

export const API_VERSION = '2026-10-28.endive';

export function event(
  type: string,
  object: StripeObject,
  request: { id: string | null; idempotency_key: string | null },
): StripeObject {
  return {
    id: newId('evt'),
    object: 'event',
    api_version: API_VERSION,
    created: nowSeconds(),
    data: { object: structuredClone(object) },
    livemode: false,
    pending_webhooks: 1,
    request,
    type,
  };
}
