import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi, type RunningApi } from '../fixtures/api.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import {
  billingAddressBody,
  callJson,
  cardBody,
  usageRecord,
  waitForIngressMeter,
  webhookBody,
} from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { appendedEvent, recordedDelivery } from '../fixtures/webhook-events.js';
import { createCustomers, customerToken } from '../fixtures/operator.js';
import { operatorUser, roleToken } from '../fixtures/roles.js';
import { OPERATOR_ROLES, roleAllows, type OperatorRole } from '../../shared/auth/roles.js';
import { permissionTable } from '../../services/roles/api/route-areas.js';

/**
 * Scope matrix (docs/design.md §6): every endpoint × {no token, read, write, admin}. A token with at least the
 * row's scope gets the row's success status; a weaker one 403 insufficient_scope (naming the scope);
 * no token 401. Tokens belong to an operator account, so `admin` really is admin.
 *
 * To cover more endpoints, append rows to ROWS. `request` runs once per token that is expected to pass or
 * fail, so it may create a fresh resource each time (a DELETE needs something to delete every time).
 */
interface Fixture {
  api: RunningApi;
  account: TestAccount;
  /** Calls the api as the operator account with its admin token (set-up helper for rows). */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  product(pricing?: 'flat' | 'metered'): Promise<string>;
  meter(): Promise<string>;
  subscription(): Promise<string>;
  paymentMethod(): Promise<string>;
  webhook(): Promise<string>;
  /** An invoice of the account (inserted as the billing run writes it; there is no invoice-creating endpoint). */
  invoice(): Promise<string>;
  /** A draft invoice of the account (BILLING_DRAFTS: what the close writes at a period's end). */
  draftInvoice(): Promise<string>;
  /** One active meter the ingress registry already knows (created once, shared by the usage rows). */
  usageMeter(): Promise<string>;
  /** A new test clock of the account, at 2026-11-10T00:00:00Z. */
  testClock(): Promise<string>;
  /** A customer made over the API (its cus_ id). */
  customer(): Promise<string>;
  /** A tax rate of the deployment (its txr_ id). */
  taxRate(): Promise<string>;
  /** A meter of the deployment (operator mode). */
  deploymentMeter(): Promise<string>;
  /** A coupon of the deployment (its coupon_ id): 10 % off, forever. */
  coupon(): Promise<string>;
  /** A metered entitlement of the operator's own account (its ent_ id). */
  entitlement(): Promise<string>;
  /** A plan of the deployment (its plan_ id), version 1 of one flat product. */
  plan(): Promise<string>;
  /** A customer made over the API with one of each thing it owns (made once, shared by the rows). */
  customerOwn(): Promise<CustomerOwn>;
  /** A new open invoice of that customer. */
  customerInvoice(): Promise<string>;
  /** A new user of the operator's account with this role (its usr_ id). */
  operatorUser(role: OperatorRole): Promise<string>;
}

/** What a customer of the operator owns, each by id (operator mode: the admin acts on them by id). */
interface CustomerOwn {
  customerId: string;
  accountId: string;
  subscription: string;
  invoice: string;
  creditNote: string;
  paymentMethod: string;
  credit: string;
  meter: string;
  entitlement: string;
}

let customers = 0;
let entitlements = 0;

interface Row {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Pattern, for the report: '/v1/meters/:meter_id'. */
  route: string;
  scope: 'public' | 'read' | 'write' | 'admin';
  success: number;
  request(fx: Fixture): Promise<{ path: string; body?: unknown }>;
  /**
   * A route whose own scope is weaker than what this request needs (the body asks for more: a deployment meter):
   * tokens below the route's scope are refused naming it, the others naming `scope`.
   */
  routeScope?: 'read' | 'write';
  /**
   * The request names a customer's resource by id: the operator account's tokens below `scope` (but with the route's
   * own scope) act only for their own account, so to them it is another account's — 404 not_found, like an unknown id.
   */
  othersBelowScope?: true;
  /** Optional check of a successful answer, where the status alone could hide a failure (a 202 batch of rejections). */
  verify?(body: any): string | undefined;
}

const EXPORT_BODY = {
  kind: 'invoices',
  format: 'csv',
  from: '2026-10-01T00:00:00Z',
  to: '2026-11-01T00:00:00Z',
  destination: { type: 'local', path: 'matrix' },
};
const SCHEDULE_BODY = {
  kind: 'customers',
  format: 'csv',
  interval: 'daily',
  destination: { type: 'local', path: 'matrix' },
};

let promotionCodes = 0;
/** A fresh promotion code of the deployment (its promo_ id). */
const promotionCode = async (fx: Fixture) =>
  (await fx.admin('POST', '/v1/promotion_codes', { coupon_id: await fx.coupon(), code: `MATRIX-${++promotionCodes}` }))
    .id as string;
/** The one card the top-up rows charge (card additions are rate-limited per account). */
let topUpCard: Promise<string> | undefined;

const ROWS: Row[] = [
  // products: the catalog; every token reads it, admin writes it
  {
    method: 'GET',
    route: '/v1/products',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/products' }),
  },
  {
    method: 'GET',
    route: '/v1/products/:product_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/products/${await fx.product()}` }),
  },
  {
    method: 'POST',
    route: '/v1/products',
    scope: 'admin',
    success: 201,
    request: async () => ({ path: '/v1/products', body: { name: 'p', price: 1, currency: 'USD' } }),
  },
  {
    method: 'PATCH',
    route: '/v1/products/:product_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/products/${await fx.product()}`, body: { price: 2 } }),
  },
  {
    method: 'DELETE',
    route: '/v1/products/:product_id',
    scope: 'admin',
    success: 204,
    request: async (fx) => ({ path: `/v1/products/${await fx.product()}` }),
  },
  // meters
  {
    method: 'GET',
    route: '/v1/meters',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/meters?status=active' }),
  },
  {
    method: 'GET',
    route: '/v1/meters/:meter_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/meters/${await fx.meter()}` }),
  },
  {
    method: 'POST',
    route: '/v1/meters',
    scope: 'write',
    success: 201,
    request: async () => ({ path: '/v1/meters', body: { name: 'm', unit: 'u', aggregation: 'sum' } }),
  },
  {
    method: 'PATCH',
    route: '/v1/meters/:meter_id',
    scope: 'write',
    success: 200,
    request: async (fx) => ({ path: `/v1/meters/${await fx.meter()}`, body: { status: 'inactive' } }),
  },
  // subscriptions
  {
    method: 'GET',
    route: '/v1/subscriptions',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/subscriptions' }),
  },
  {
    method: 'GET',
    route: '/v1/subscriptions/:subscription_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/subscriptions/${await fx.subscription()}` }),
  },
  {
    method: 'POST',
    route: '/v1/subscriptions',
    scope: 'write',
    success: 201,
    request: async (fx) => ({ path: '/v1/subscriptions', body: { items: [{ product_id: await fx.product() }] } }),
  },
  {
    method: 'PATCH',
    route: '/v1/subscriptions/:subscription_id',
    scope: 'write',
    success: 200,
    request: async (fx) => ({ path: `/v1/subscriptions/${await fx.subscription()}`, body: { status: 'canceled' } }),
  },
  {
    method: 'POST',
    route: '/v1/subscriptions/:subscription_id/plan_change',
    scope: 'write',
    success: 200,
    request: async (fx) => ({
      path: `/v1/subscriptions/${await fx.subscription()}/plan_change`,
      body: { plan_id: await fx.plan(), at: 'now' },
    }),
    verify: (b) => (/^plan_/.test(b.plan_id ?? '') ? undefined : `not moved: ${JSON.stringify(b)}`),
  },
  // billing information of the caller's account
  { method: 'GET', route: '/v1/billing', scope: 'read', success: 200, request: async () => ({ path: '/v1/billing' }) },
  {
    method: 'PATCH',
    route: '/v1/billing',
    scope: 'write',
    success: 200,
    request: async () => ({ path: '/v1/billing', body: billingAddressBody('1 Main St') }),
    verify: (b) =>
      b.billing_address?.line1 === '1 Main St' ? undefined : `billing_address is ${JSON.stringify(b.billing_address)}`,
  },
  // payment methods
  {
    method: 'POST',
    route: '/v1/billing/payment-methods',
    scope: 'write',
    success: 201,
    request: async () => ({ path: '/v1/billing/payment-methods', body: cardBody() }),
  },
  {
    method: 'GET',
    route: '/v1/billing/payment-methods',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/billing/payment-methods' }),
  },
  {
    method: 'GET',
    route: '/v1/billing/payment-methods/:payment_method_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/payment-methods/${await fx.paymentMethod()}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/billing/payment-methods/:payment_method_id/default',
    scope: 'write',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/payment-methods/${await fx.paymentMethod()}/default` }),
    verify: (b) => (b.is_default === true ? undefined : `is_default is ${b.is_default}`),
  },
  // webhooks
  {
    method: 'POST',
    route: '/v1/webhooks',
    scope: 'write',
    success: 201,
    request: async () => ({ path: '/v1/webhooks', body: webhookBody() }),
  },
  {
    method: 'GET',
    route: '/v1/webhooks',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/webhooks' }),
  },
  {
    method: 'GET',
    route: '/v1/webhooks/:webhook_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/webhooks/${await fx.webhook()}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/webhooks/:webhook_id',
    scope: 'write',
    success: 200,
    request: async (fx) => ({ path: `/v1/webhooks/${await fx.webhook()}`, body: { status: 'disabled' } }),
  },
  {
    method: 'DELETE',
    route: '/v1/webhooks/:webhook_id',
    scope: 'write',
    success: 204,
    request: async (fx) => ({ path: `/v1/webhooks/${await fx.webhook()}` }),
  },
  {
    method: 'GET',
    route: '/v1/webhooks/:webhook_id/deliveries',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/webhooks/${await fx.webhook()}/deliveries` }),
  },
  {
    method: 'POST',
    route: '/v1/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    scope: 'write',
    success: 202,
    request: async (fx) => {
      const webhookId = await fx.webhook();
      return {
        path: `/v1/webhooks/${webhookId}/deliveries/${await recordedDelivery(fx.api.infra, fx.account.accountId, webhookId)}/retry`,
      };
    },
  },
  {
    method: 'POST',
    route: '/v1/webhooks/:webhook_id/rotate-secret',
    scope: 'write',
    success: 200,
    request: async (fx) => ({ path: `/v1/webhooks/${await fx.webhook()}/rotate-secret` }),
    verify: (b) => (typeof b.secret === 'string' ? undefined : 'no new secret in the answer'),
  },
  // events
  {
    method: 'GET',
    route: '/v1/events',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/events?type=subscription.updated' }),
  },
  {
    method: 'GET',
    route: '/v1/events/:event_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/events/${await appendedEvent(fx.api.infra, fx.account.accountId)}` }),
  },
  // usage: recording needs write, reading needs read
  {
    method: 'POST',
    route: '/v1/meters/:meter_id/usage',
    scope: 'write',
    success: 202,
    request: async (fx) => ({ path: `/v1/meters/${await fx.usageMeter()}/usage`, body: usageRecord() }),
  },
  {
    method: 'POST',
    route: '/v1/usage',
    scope: 'write',
    success: 202,
    request: async (fx) => ({ path: '/v1/usage', body: [{ meter_id: await fx.usageMeter(), ...usageRecord() }] }),
    verify: (b) => (b.accepted === 1 && b.rejected === 0 ? undefined : `batch outcome ${JSON.stringify(b)}`),
  },
  // the usage stream: a WebSocket; a plain GET passes authentication and scope, then is told to upgrade (426)
  {
    method: 'GET',
    route: '/v1/usage/stream',
    scope: 'write',
    success: 426,
    request: async () => ({ path: '/v1/usage/stream' }),
  },
  {
    method: 'GET',
    route: '/v1/meters/:meter_id/usage',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/meters/${await fx.usageMeter()}/usage` }),
  },
  // usage corrections: correcting needs write, the log needs read
  {
    method: 'POST',
    route: '/v1/meters/:meter_id/usage/corrections',
    scope: 'write',
    success: 201,
    request: async (fx) => ({
      path: `/v1/meters/${await fx.usageMeter()}/usage/corrections`,
      body: { cancel: ['scope-matrix-record'] },
    }),
  },
  {
    method: 'GET',
    route: '/v1/meters/:meter_id/usage/corrections',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/meters/${await fx.usageMeter()}/usage/corrections` }),
  },
  // invoices (read side; the billing run writes them)
  {
    method: 'GET',
    route: '/v1/billing/invoices',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/billing/invoices?status=open' }),
  },
  {
    method: 'GET',
    route: '/v1/billing/invoices/:invoice_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/invoices/${await fx.invoice()}` }),
  },
  {
    method: 'GET',
    route: '/v1/billing/invoices/:invoice_id/download',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/invoices/${await fx.invoice()}/download` }),
    verify: (b) =>
      typeof b === 'string' && b.startsWith('%PDF-') ? undefined : `not a PDF: ${String(b).slice(0, 40)}`,
  },
  // billing engine: the upcoming invoice and a manual payment attempt (the account's first card is its default)
  {
    method: 'GET',
    route: '/v1/billing/invoices/upcoming',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/invoices/upcoming?subscription_id=${await fx.subscription()}` }),
  },
  {
    method: 'POST',
    route: '/v1/billing/invoices/:invoice_id/pay',
    scope: 'write',
    success: 200,
    request: async (fx) => {
      await fx.paymentMethod();
      return { path: `/v1/billing/invoices/${await fx.invoice()}/pay` };
    },
    verify: (b) => (b.status === 'paid' ? undefined : `invoice not paid: ${b.status}`),
  },
  // prepaid credits: operators grant (admin), accounts read their own
  {
    method: 'POST',
    route: '/v1/billing/credits',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({
      path: '/v1/billing/credits',
      body: { account_id: fx.account.accountId, amount: 5, currency: 'USD', description: 'matrix' },
    }),
  },
  {
    method: 'GET',
    route: '/v1/billing/credits',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/billing/credits' }),
  },
  {
    method: 'GET',
    route: '/v1/billing/credits/:credit_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({
      path: `/v1/billing/credits/${(await fx.admin('POST', '/v1/billing/credits', { account_id: fx.account.accountId, amount: 1, currency: 'USD', description: 'matrix' })).id}`,
    }),
  },
  // prepaid credit bought (issue 44): a token of the account buys for itself once the operator allows it
  {
    method: 'POST',
    route: '/v1/credit_top_ups',
    scope: 'write',
    success: 201,
    request: async (fx) => {
      await fx.admin('PATCH', '/v1/portal_settings', { customer_can_buy_credit: true });
      await (topUpCard ??= fx.paymentMethod());
      return { path: '/v1/credit_top_ups', body: { amount: 5, currency: 'USD' } };
    },
    verify: (b) => (b.status === 'paid' && b.grant_id ? undefined : `top-up ${b.status}, grant ${b.grant_id}`),
  },
  {
    method: 'GET',
    route: '/v1/credit_top_ups/:top_up_id',
    scope: 'read',
    success: 200,
    request: async (fx) => {
      await (topUpCard ??= fx.paymentMethod());
      const topUp = await fx.admin('POST', '/v1/credit_top_ups', { amount: 2, currency: 'USD' });
      return { path: `/v1/credit_top_ups/${topUp.id}` };
    },
  },
  {
    method: 'GET',
    route: '/v1/credit_settings',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/credit_settings' }),
  },
  {
    method: 'PUT',
    route: '/v1/credit_settings',
    scope: 'write',
    success: 200,
    request: async (fx) => {
      await fx.admin('PATCH', '/v1/portal_settings', { customer_can_buy_credit: true });
      return {
        path: '/v1/credit_settings',
        body: { currency: 'USD', auto_recharge: null, low_balance_threshold: 3 },
      };
    },
    verify: (b) => (b.low_balance_threshold === 3 ? undefined : `low_balance_threshold ${b.low_balance_threshold}`),
  },
  // credit notes and void: operators issue them (admin), accounts read their own notes
  {
    method: 'POST',
    route: '/v1/billing/invoices/:invoice_id/credit-notes',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({
      path: `/v1/billing/invoices/${await fx.invoice()}/credit-notes`,
      body: { amount: 1, reason: 'matrix' },
    }),
    verify: (b) => (b.type === 'credit' && b.amount === 1 ? undefined : `not a credit of 1: ${JSON.stringify(b)}`),
  },
  {
    method: 'POST',
    route: '/v1/billing/invoices/:invoice_id/void',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/invoices/${await fx.invoice()}/void` }),
    verify: (b) => (b.status === 'void' ? undefined : `invoice not void: ${b.status}`),
  },
  // hosted pages: operators revoke and rotate an invoice's link; a link to the card page, for oneself or (admin) a customer
  {
    method: 'POST',
    route: '/v1/billing/invoices/:invoice_id/hosted-link/revoke',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/invoices/${await fx.invoice()}/hosted-link/revoke` }),
    verify: (b) => (b.hosted_invoice_url === null ? undefined : `link not revoked: ${JSON.stringify(b)}`),
  },
  {
    method: 'POST',
    route: '/v1/billing/invoices/:invoice_id/hosted-link/rotate',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/invoices/${await fx.invoice()}/hosted-link/rotate` }),
    verify: (b) =>
      /\/hosted\/invoices\/inv_/.test(b.hosted_invoice_url ?? '') ? undefined : `no new link: ${JSON.stringify(b)}`,
  },
  {
    method: 'POST',
    route: '/v1/billing/payment-method-links',
    scope: 'write',
    success: 201,
    request: async () => ({ path: '/v1/billing/payment-method-links', body: {} }),
    verify: (b) =>
      /\/hosted\/cards\/[A-Za-z0-9_-]{43}$/.test(b.url ?? '') ? undefined : `no link: ${JSON.stringify(b)}`,
  },
  {
    method: 'POST',
    route: '/v1/billing/payment-method-links',
    scope: 'admin',
    routeScope: 'write',
    success: 201,
    request: async (fx) => ({
      path: '/v1/billing/payment-method-links',
      body: { customer_id: (await fx.customerOwn()).customerId },
    }),
  },
  // the customer portal: operators make a customer's one-time portal link (docs/portal.md)
  {
    method: 'POST',
    route: '/v1/portal_sessions',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({
      path: '/v1/portal_sessions',
      body: { customer_id: (await fx.customerOwn()).customerId, return_url: 'https://shop.example/account' },
    }),
    verify: (b) =>
      /\/portal\/start\/[A-Za-z0-9_-]{43}$/.test(b.url ?? '') ? undefined : `no link: ${JSON.stringify(b)}`,
  },
  // drafts: operators finalize them and add one-off lines
  {
    method: 'POST',
    route: '/v1/billing/invoices/:invoice_id/finalize',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/billing/invoices/${await fx.draftInvoice()}/finalize` }),
    verify: (b) => (b.status !== 'draft' && b.number ? undefined : `not finalized: ${b.status} ${b.number}`),
  },
  {
    method: 'POST',
    route: '/v1/billing/invoices/:invoice_id/lines',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({
      path: `/v1/billing/invoices/${await fx.draftInvoice()}/lines`,
      body: { description: 'Setup fee', amount: 5 },
    }),
    verify: (b) => (b.status === 'draft' && b.amount === 5 ? undefined : `line not added: ${JSON.stringify(b)}`),
  },
  {
    method: 'GET',
    route: '/v1/billing/credit-notes',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/billing/credit-notes' }),
  },
  {
    method: 'GET',
    route: '/v1/billing/credit-notes/:credit_note_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({
      path: `/v1/billing/credit-notes/${(await fx.admin('POST', `/v1/billing/invoices/${await fx.invoice()}/credit-notes`, { amount: 1, reason: 'matrix' })).id}`,
    }),
  },
  {
    method: 'GET',
    route: '/v1/billing/credit-notes/:credit_note_id/download',
    scope: 'read',
    success: 200,
    request: async (fx) => ({
      path: `/v1/billing/credit-notes/${(await fx.admin('POST', `/v1/billing/invoices/${await fx.invoice()}/credit-notes`, { amount: 1, reason: 'matrix' })).id}/download`,
    }),
  },
  // test clocks: the operator's (admin) simulated time for its test customers
  {
    method: 'POST',
    route: '/v1/test_clocks',
    scope: 'admin',
    success: 201,
    request: async () => ({ path: '/v1/test_clocks', body: { frozen_time: '2026-11-10T00:00:00Z' } }),
  },
  {
    method: 'GET',
    route: '/v1/test_clocks',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/test_clocks' }),
  },
  {
    method: 'GET',
    route: '/v1/test_clocks/:clock_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/test_clocks/${await fx.testClock()}` }),
  },
  {
    method: 'DELETE',
    route: '/v1/test_clocks/:clock_id',
    scope: 'admin',
    success: 204,
    request: async (fx) => ({ path: `/v1/test_clocks/${await fx.testClock()}` }),
  },
  {
    method: 'POST',
    route: '/v1/test_clocks/:clock_id/advance',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({
      path: `/v1/test_clocks/${await fx.testClock()}/advance`,
      body: { frozen_time: '2026-11-11T00:00:00Z' },
    }),
    verify: (b) => (b.frozen_time === '2026-11-11T00:00:00.000Z' ? undefined : `not advanced: ${JSON.stringify(b)}`),
  },
  {
    method: 'POST',
    route: '/v1/test_clocks/:clock_id/customers',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({
      path: `/v1/test_clocks/${await fx.testClock()}/customers`,
      body: { customer_id: (await createTestAccount(fx.api.infra)).customerId },
    }),
    verify: (b) => (b.customer_ids.length === 1 ? undefined : `no customer on it: ${JSON.stringify(b)}`),
  },
  // the API description is public
  {
    method: 'GET',
    route: '/openapi.json',
    scope: 'public',
    success: 200,
    request: async () => ({ path: '/openapi.json' }),
  },
  // operator mode: customers are the operator's (admin); a deployment meter needs admin to make
  {
    method: 'POST',
    route: '/v1/customers',
    scope: 'admin',
    success: 201,
    request: async () => ({ path: '/v1/customers', body: { name: 'c', external_id: `matrix-${++customers}` } }),
  },
  {
    method: 'GET',
    route: '/v1/customers',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/customers?external_id=matrix-1' }),
  },
  {
    method: 'GET',
    route: '/v1/customers/:customer_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/customers/${await fx.customer()}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/customers/:customer_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/customers/${await fx.customer()}`, body: { name: 'renamed' } }),
  },
  {
    method: 'POST',
    route: '/v1/customers/:customer_id/users',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({
      path: `/v1/customers/${await fx.customer()}/users`,
      body: { email: `person${++customers}@matrix.example` },
    }),
  },
  {
    method: 'GET',
    route: '/v1/customers/:customer_id/users',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/customers/${await fx.customer()}/users` }),
  },
  {
    method: 'POST',
    route: '/v1/meters',
    scope: 'admin',
    success: 201,
    routeScope: 'write',
    request: async () => ({
      path: '/v1/meters',
      body: { name: 'deployment', unit: 'u', aggregation: 'sum', scope: 'deployment' },
    }),
    verify: (b) => (b.scope === 'deployment' ? undefined : `scope is ${b.scope}`),
  },
  {
    method: 'PATCH',
    route: '/v1/meters/:meter_id',
    scope: 'admin',
    success: 200,
    routeScope: 'write',
    request: async (fx) => ({ path: `/v1/meters/${await fx.deploymentMeter()}`, body: { name: 'renamed' } }),
  },
  // operator mode: acting for a customer (customer_id) and a deployment webhook need admin
  {
    method: 'POST',
    route: '/v1/subscriptions',
    scope: 'admin',
    success: 201,
    routeScope: 'write',
    request: async (fx) => ({
      path: '/v1/subscriptions',
      body: { customer_id: await fx.customer(), items: [{ product_id: await fx.product() }] },
    }),
  },
  {
    method: 'GET',
    route: '/v1/subscriptions',
    scope: 'admin',
    success: 200,
    routeScope: 'read',
    request: async (fx) => ({ path: `/v1/subscriptions?customer_id=${await fx.customer()}` }),
  },
  {
    method: 'GET',
    route: '/v1/billing/invoices',
    scope: 'admin',
    success: 200,
    routeScope: 'read',
    request: async (fx) => ({ path: `/v1/billing/invoices?customer_id=${await fx.customer()}` }),
  },
  {
    method: 'GET',
    route: '/v1/billing/credits',
    scope: 'admin',
    success: 200,
    routeScope: 'read',
    request: async (fx) => ({ path: `/v1/billing/credits?customer_id=${await fx.customer()}` }),
  },
  {
    method: 'POST',
    route: '/v1/webhooks',
    scope: 'admin',
    success: 201,
    routeScope: 'write',
    request: async () => ({ path: '/v1/webhooks', body: { ...webhookBody(), scope: 'deployment' } }),
    verify: (b) => (b.scope === 'deployment' ? undefined : `scope is ${b.scope}`),
  },
  // operator mode: by id, an admin acts on a customer's resource exactly as the customer can (the actor's scope)
  ...customerResourceRows(),
  // tax rates: the deployment's (admin), read and written
  {
    method: 'POST',
    route: '/v1/tax_rates',
    scope: 'admin',
    success: 201,
    request: async () => ({ path: '/v1/tax_rates', body: { name: 'VAT', percentage: 20, inclusive: false } }),
  },
  {
    method: 'GET',
    route: '/v1/tax_rates',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/tax_rates' }),
  },
  {
    method: 'GET',
    route: '/v1/tax_rates/:tax_rate_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/tax_rates/${await fx.taxRate()}` }),
  },
  {
    method: 'POST',
    route: '/v1/tax_rates/:tax_rate_id/archive',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/tax_rates/${await fx.taxRate()}/archive` }),
  },
  // entitlements: operators write, every token reads its own and checks
  {
    method: 'POST',
    route: '/v1/entitlements',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({
      path: '/v1/entitlements',
      body: { customer_id: fx.account.customerId, feature: `matrix-${++entitlements}`, type: 'boolean' },
    }),
  },
  {
    method: 'GET',
    route: '/v1/entitlements',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/entitlements' }),
  },
  {
    method: 'GET',
    route: '/v1/entitlements/check',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/entitlements/check?feature=anything' }),
  },
  {
    method: 'GET',
    route: '/v1/entitlements/:entitlement_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/entitlements/${await fx.entitlement()}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/entitlements/:entitlement_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/entitlements/${await fx.entitlement()}`, body: { limit: 5 } }),
  },
  {
    method: 'DELETE',
    route: '/v1/entitlements/:entitlement_id',
    scope: 'admin',
    success: 204,
    request: async (fx) => ({ path: `/v1/entitlements/${await fx.entitlement()}` }),
  },
  {
    method: 'POST',
    route: '/v1/entitlements/:entitlement_id/grants',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({ path: `/v1/entitlements/${await fx.entitlement()}/grants`, body: { amount: 10 } }),
  },
  // alerts: an account's own (write creates and deletes, read reads); an admin's on any customer
  {
    method: 'POST',
    route: '/v1/alerts',
    scope: 'write',
    success: 201,
    request: async (fx) => ({ path: '/v1/alerts', body: { meter_id: await fx.meter(), thresholds: [10] } }),
  },
  {
    method: 'GET',
    route: '/v1/alerts',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/alerts' }),
  },
  {
    method: 'GET',
    route: '/v1/alerts/:alert_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({
      path: `/v1/alerts/${(await fx.admin('POST', '/v1/alerts', { meter_id: await fx.meter(), thresholds: [1] })).id}`,
    }),
  },
  {
    method: 'DELETE',
    route: '/v1/alerts/:alert_id',
    scope: 'write',
    success: 204,
    request: async (fx) => ({
      path: `/v1/alerts/${(await fx.admin('POST', '/v1/alerts', { meter_id: await fx.meter(), thresholds: [1] })).id}`,
    }),
  },
  {
    method: 'POST',
    route: '/v1/alerts',
    scope: 'admin',
    success: 201,
    routeScope: 'write',
    request: async (fx) => ({
      path: '/v1/alerts',
      body: { customer_id: await fx.customer(), metric: 'amount', currency: 'USD', thresholds: [100] },
    }),
  },
  // exports: the operator's (admin only), to a local directory below EXPORTS_LOCAL_ROOT
  {
    method: 'POST',
    route: '/v1/exports',
    scope: 'admin',
    success: 201,
    request: async () => ({ path: '/v1/exports', body: EXPORT_BODY }),
  },
  {
    method: 'GET',
    route: '/v1/exports',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/exports' }),
  },
  {
    method: 'GET',
    route: '/v1/exports/:export_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/exports/${(await fx.admin('POST', '/v1/exports', EXPORT_BODY)).id}` }),
  },
  {
    method: 'POST',
    route: '/v1/export_schedules',
    scope: 'admin',
    success: 201,
    request: async () => ({ path: '/v1/export_schedules', body: { ...SCHEDULE_BODY } }),
  },
  {
    method: 'GET',
    route: '/v1/export_schedules',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/export_schedules' }),
  },
  {
    method: 'GET',
    route: '/v1/export_schedules/:schedule_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({
      path: `/v1/export_schedules/${(await fx.admin('POST', '/v1/export_schedules', SCHEDULE_BODY)).id}`,
    }),
  },
  {
    method: 'DELETE',
    route: '/v1/export_schedules/:schedule_id',
    scope: 'admin',
    success: 204,
    request: async (fx) => ({
      path: `/v1/export_schedules/${(await fx.admin('POST', '/v1/export_schedules', SCHEDULE_BODY)).id}`,
    }),
  },
  // plans: the deployment's catalog (admin writes, every token reads)
  {
    method: 'POST',
    route: '/v1/plans',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({
      path: '/v1/plans',
      body: { name: 'Team', currency: 'USD', interval: 'month', items: [{ product_id: await fx.product() }] },
    }),
  },
  {
    method: 'POST',
    route: '/v1/plans/:plan_id/versions',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({ path: `/v1/plans/${await fx.plan()}/versions`, body: { trial_days: 7 } }),
  },
  {
    method: 'GET',
    route: '/v1/plans',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/plans' }),
  },
  {
    method: 'GET',
    route: '/v1/plans/:plan_id',
    scope: 'read',
    success: 200,
    request: async (fx) => ({ path: `/v1/plans/${await fx.plan()}?version=1` }),
  },
  {
    method: 'POST',
    route: '/v1/plans/:plan_id/migrate',
    scope: 'admin',
    success: 200,
    request: async (fx) => {
      const plan = await fx.plan();
      await fx.admin('POST', `/v1/plans/${plan}/versions`, { trial_days: 1 });
      return { path: `/v1/plans/${plan}/migrate`, body: { from_version: 1, to_version: 2, at: 'now', dry_run: true } };
    },
  },
  // coupons: the deployment's (admin), read and written; applying one to a subscription is admin too
  {
    method: 'POST',
    route: '/v1/coupons',
    scope: 'admin',
    success: 201,
    request: async () => ({ path: '/v1/coupons', body: { name: 'TEN', percent_off: 10, duration: 'forever' } }),
  },
  {
    method: 'GET',
    route: '/v1/coupons',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/coupons' }),
  },
  {
    method: 'GET',
    route: '/v1/coupons/:coupon_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/coupons/${await fx.coupon()}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/subscriptions/:subscription_id',
    scope: 'admin',
    routeScope: 'write',
    success: 200,
    request: async (fx) => ({
      path: `/v1/subscriptions/${await fx.subscription()}`,
      body: { coupon_id: await fx.coupon() },
    }),
    verify: (b) => (b.discount?.coupon?.percent_off === 10 ? undefined : `discount is ${JSON.stringify(b.discount)}`),
  },
  // issue 49 (sec-terms): portal settings are the operator's (admin changes them; every token reads them, so a
  // customer's console offers only what it may do); the customer-of-an-operator rows are below
  {
    method: 'GET',
    route: '/v1/portal_settings',
    scope: 'read',
    success: 200,
    request: async () => ({ path: '/v1/portal_settings' }),
  },
  {
    method: 'PATCH',
    route: '/v1/portal_settings',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/portal_settings', body: { self_serve_subscriptions: true } }),
  },
  // issue 47: the audit log and the operator's users (their roles)
  {
    method: 'GET',
    route: '/v1/audit_events',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/audit_events?resource_type=product&per_page=5' }),
    verify: (b) => (b.data.length > 0 ? undefined : 'no audit event of a product'),
  },
  {
    method: 'GET',
    route: '/v1/users',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/users' }),
    verify: (b) => (b.data.some((u: any) => u.role === 'owner') ? undefined : 'no owner listed'),
  },
  {
    method: 'PATCH',
    route: '/v1/users/:user_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/users/${await fx.operatorUser('developer')}`, body: { role: 'billing' } }),
    verify: (b) => (b.role === 'billing' ? undefined : `role is ${b.role}`),
  },
  // issue 48: the seller and branding on every document are the operator's (admin)
  {
    method: 'GET',
    route: '/v1/seller_settings',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/seller_settings' }),
  },
  {
    method: 'PATCH',
    route: '/v1/seller_settings',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/seller_settings', body: { legal_name: 'Matrix Seller Ltd' } }),
    verify: (b) => (b.legal_name === 'Matrix Seller Ltd' ? undefined : `legal_name is ${b.legal_name}`),
  },
  // promotion codes (docs/checkout.md): the deployment's (admin), read and written
  {
    method: 'POST',
    route: '/v1/promotion_codes',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({
      path: '/v1/promotion_codes',
      body: { coupon_id: await fx.coupon(), code: `MATRIX-${++promotionCodes}` },
    }),
  },
  {
    method: 'GET',
    route: '/v1/promotion_codes',
    scope: 'admin',
    success: 200,
    request: async () => ({ path: '/v1/promotion_codes' }),
  },
  {
    method: 'GET',
    route: '/v1/promotion_codes/:promotion_code_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/promotion_codes/${await promotionCode(fx)}` }),
  },
  {
    method: 'POST',
    route: '/v1/promotion_codes/:promotion_code_id/deactivate',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({ path: `/v1/promotion_codes/${await promotionCode(fx)}/deactivate` }),
  },
  // checkout sessions (docs/checkout.md): the operator's (admin); the hosted page itself is public (the link is the secret)
  {
    method: 'POST',
    route: '/v1/checkout_sessions',
    scope: 'admin',
    success: 201,
    request: async (fx) => ({
      path: '/v1/checkout_sessions',
      body: {
        plan_id: await fx.plan(),
        customer_email: 'matrix@example.com',
        success_url: 'https://example.com/ok',
        cancel_url: 'https://example.com/back',
      },
    }),
  },
  {
    method: 'GET',
    route: '/v1/checkout_sessions/:checkout_session_id',
    scope: 'admin',
    success: 200,
    request: async (fx) => ({
      path: `/v1/checkout_sessions/${
        (
          await fx.admin('POST', '/v1/checkout_sessions', {
            plan_id: await fx.plan(),
            customer_email: 'matrix@example.com',
            success_url: 'https://example.com/ok',
            cancel_url: 'https://example.com/back',
          })
        ).id
      }`,
    }),
  },
  // ↑ append rows for further endpoints here
];

/**
 * Writes of this matrix that change no audited row (docs/audit.md "What is logged"): usage goes to NATS, a delivery
 * retry is queue state, the row's migration is a dry run, and the customer's card it makes the default already is
 * (a no-op changes no row). Every other write must leave an audit event naming its route.
 */
const WRITES_WITHOUT_AUDIT = new Set([
  'POST /v1/meters/:meter_id/usage',
  'POST /v1/usage',
  'POST /v1/webhooks/:webhook_id/deliveries/:delivery_id/retry',
  'POST /v1/plans/:plan_id/migrate',
  'PATCH /v1/billing/payment-methods/:payment_method_id/default',
]);

/**
 * Issue 49 (sec-terms): a customer of an operator — a customer's own token, on what the operator made for it. What a
 * subscription bills is the operator's: the customer reads it but changes it only as portal settings allow (all
 * off by default: 403 `operator_terms`); operator-only routes answer 403 `insufficient_scope`. `status` per token.
 */
interface CustomerRow {
  what: string;
  method: 'GET' | 'POST' | 'PATCH';
  request(fx: Fixture, customer: { id: string }): Promise<{ path: string; body?: unknown }>;
  read: { status: number; code?: string };
  write: { status: number; code?: string };
}
const operatorSubscription = async (fx: Fixture, customer: { id: string }) =>
  (
    await fx.admin('POST', '/v1/subscriptions', {
      customer_id: customer.id,
      items: [{ product_id: await fx.product() }],
    })
  ).id as string;
const CUSTOMER_ROWS: CustomerRow[] = [
  {
    what: 'reads the subscription the operator made for it',
    method: 'GET',
    request: async (fx, c) => ({ path: `/v1/subscriptions/${await operatorSubscription(fx, c)}` }),
    read: { status: 200 },
    write: { status: 200 },
  },
  {
    what: 'replaces its items',
    method: 'PATCH',
    request: async (fx, c) => ({
      path: `/v1/subscriptions/${await operatorSubscription(fx, c)}`,
      body: { items: [{ product_id: await fx.product() }] },
    }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 403, code: 'operator_terms' },
  },
  {
    what: 'cancels it',
    method: 'PATCH',
    request: async (fx, c) => ({
      path: `/v1/subscriptions/${await operatorSubscription(fx, c)}`,
      body: { status: 'canceled' },
    }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 403, code: 'operator_terms' },
  },
  {
    what: 'sets its billing threshold',
    method: 'PATCH',
    request: async (fx, c) => ({
      path: `/v1/subscriptions/${await operatorSubscription(fx, c)}`,
      body: { billing_threshold: { amount: 100 } },
    }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 403, code: 'operator_terms' },
  },
  {
    what: 'applies a coupon',
    method: 'PATCH',
    request: async (fx, c) => ({
      path: `/v1/subscriptions/${await operatorSubscription(fx, c)}`,
      body: { coupon_id: await fx.coupon() },
    }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 403, code: 'insufficient_scope' },
  },
  {
    what: 'subscribes itself to the catalog (self-serve, on by default)',
    method: 'POST',
    request: async (fx) => ({ path: '/v1/subscriptions', body: { items: [{ product_id: await fx.product() }] } }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 201 },
  },
  {
    what: 'reads the portal settings (what it may do itself: its console offers only that)',
    method: 'GET',
    request: async () => ({ path: '/v1/portal_settings' }),
    read: { status: 200 },
    write: { status: 200 },
  },
  {
    what: 'changes the portal settings',
    method: 'PATCH',
    request: async () => ({ path: '/v1/portal_settings', body: { customer_can_cancel: true } }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 403, code: 'insufficient_scope' },
  },
  {
    what: 'reads the seller settings',
    method: 'GET',
    request: async () => ({ path: '/v1/seller_settings' }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 403, code: 'insufficient_scope' },
  },
  {
    what: 'changes the seller settings',
    method: 'PATCH',
    request: async () => ({ path: '/v1/seller_settings', body: { legal_name: 'Mallory Ltd' } }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 403, code: 'insufficient_scope' },
  },
  {
    what: 'allows customer meters on a product',
    method: 'PATCH',
    request: async (fx) => ({
      path: `/v1/products/${await fx.product('metered')}`,
      body: { allow_customer_meters: true },
    }),
    read: { status: 403, code: 'insufficient_scope' },
    write: { status: 403, code: 'insufficient_scope' },
  },
];
/** A row of an admin acting on a customer's resource named by id (othersBelowScope): `route` read or changed. */
function byIdOfCustomer(
  method: Row['method'],
  route: string,
  path: (own: CustomerOwn, fx: Fixture) => Promise<string> | string,
  verify?: Row['verify'],
): Row {
  return {
    method,
    route,
    scope: 'admin',
    routeScope: method === 'GET' ? 'read' : 'write',
    othersBelowScope: true,
    success: 200,
    request: async (fx) => ({ path: await path(await fx.customerOwn(), fx) }),
    ...(verify ? { verify } : {}),
  };
}

function customerResourceRows(): Row[] {
  const isPdf: Row['verify'] = (b) =>
    typeof b === 'string' && b.startsWith('%PDF-') ? undefined : `not a PDF: ${String(b).slice(0, 40)}`;
  const ofCustomer =
    (key: string) =>
    (b: any): string | undefined =>
      b[key] !== undefined ? undefined : `no ${key} in ${JSON.stringify(b).slice(0, 120)}`;
  return [
    byIdOfCustomer(
      'GET',
      '/v1/billing/invoices/:invoice_id',
      (o) => `/v1/billing/invoices/${o.invoice}`,
      ofCustomer('lines'),
    ),
    byIdOfCustomer(
      'GET',
      '/v1/billing/invoices/:invoice_id/download',
      (o) => `/v1/billing/invoices/${o.invoice}/download`,
      isPdf,
    ),
    byIdOfCustomer(
      'POST',
      '/v1/billing/invoices/:invoice_id/pay',
      async (_o, fx) => `/v1/billing/invoices/${await fx.customerInvoice()}/pay`,
      (b) => (b.status === 'paid' ? undefined : `invoice not paid: ${b.status}`),
    ),
    byIdOfCustomer(
      'GET',
      '/v1/billing/invoices/upcoming',
      (o) => `/v1/billing/invoices/upcoming?subscription_id=${o.subscription}`,
      (b) =>
        b.status === 'draft' && b.lines[0]?.description === 'fixture'
          ? undefined
          : `not the customer's draft: ${JSON.stringify(b)}`,
    ),
    {
      ...byIdOfCustomer(
        'GET',
        '/v1/billing/invoices/upcoming',
        (o) => `/v1/billing/invoices/upcoming?customer_id=${o.customerId}`,
      ),
      othersBelowScope: undefined,
    },
    byIdOfCustomer(
      'GET',
      '/v1/billing/credit-notes/:credit_note_id',
      (o) => `/v1/billing/credit-notes/${o.creditNote}`,
      ofCustomer('lines'),
    ),
    byIdOfCustomer(
      'GET',
      '/v1/billing/credit-notes/:credit_note_id/download',
      (o) => `/v1/billing/credit-notes/${o.creditNote}/download`,
      isPdf,
    ),
    {
      ...byIdOfCustomer(
        'GET',
        '/v1/billing/credit-notes',
        (o) => `/v1/billing/credit-notes?customer_id=${o.customerId}`,
        (b) => (b.data.length === 1 ? undefined : `${b.data.length} notes`),
      ),
      othersBelowScope: undefined,
    },
    byIdOfCustomer(
      'GET',
      '/v1/billing/payment-methods/:payment_method_id',
      (o) => `/v1/billing/payment-methods/${o.paymentMethod}`,
      ofCustomer('card'),
    ),
    byIdOfCustomer(
      'PATCH',
      '/v1/billing/payment-methods/:payment_method_id/default',
      (o) => `/v1/billing/payment-methods/${o.paymentMethod}/default`,
      (b) => (b.is_default === true ? undefined : `is_default is ${b.is_default}`),
    ),
    {
      ...byIdOfCustomer(
        'GET',
        '/v1/billing/payment-methods',
        (o) => `/v1/billing/payment-methods?customer_id=${o.customerId}`,
        (b) => (b.data.length === 1 ? undefined : `${b.data.length} cards`),
      ),
      othersBelowScope: undefined,
    },
    byIdOfCustomer(
      'GET',
      '/v1/billing/credits/:credit_id',
      (o) => `/v1/billing/credits/${o.credit}`,
      ofCustomer('remaining'),
    ),
    byIdOfCustomer(
      'GET',
      '/v1/entitlements/:entitlement_id',
      (o) => `/v1/entitlements/${o.entitlement}`,
      ofCustomer('feature'),
    ),
    byIdOfCustomer('GET', '/v1/meters/:meter_id', (o) => `/v1/meters/${o.meter}`, ofCustomer('aggregation')),
    byIdOfCustomer(
      'GET',
      '/v1/meters/:meter_id/usage',
      (o) => `/v1/meters/${o.meter}/usage?window=none`,
      ofCustomer('value'),
    ),
  ];
}

const RANK = { public: 0, read: 1, write: 2, admin: 3 } as const;

t.test('scope matrix', async (t) => {
  // Exports need a local root to accept a local destination; the matrix never runs them (no billing role).
  const config = await isolatedConfig(t, { EXPORTS_LOCAL_ROOT: path.join(tmpdir(), 'meterline-matrix-exports') });
  const api = await startApi(t, config);
  const account = await createTestAccount(api.infra, { operator: true });

  const send = (method: string, path: string, token: string | undefined, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await send(method, path, account.tokens.admin, body);
    if (r.status >= 300) throw new Error(`fixture ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  let usageMeter: Promise<string> | undefined;
  let customerOwn: Promise<CustomerOwn> | undefined;
  let customerInvoices = 0;
  // One invoice per subscription and period: each of the customer's in a year of its own.
  const invoiceOf = async (own: CustomerOwn, year = 2000 + ++customerInvoices) =>
    insertInvoice(api.infra.pg, {
      accountId: own.accountId,
      customerId: own.customerId,
      subscriptionId: own.subscription,
      amount: '3',
      periodStart: `${year}-01-01`,
      periodEnd: `${year}-01-31`,
      lines: [{ product_id: await fx.product(), description: 'fixture', quantity: '1', unit_price: '3', amount: '3' }],
    });
  /** Audit events of a write row's route so far; undefined for reads and writes that audit nothing. */
  const auditCount = async (row: Row): Promise<number | undefined> => {
    const route = `${row.method} ${row.route}`;
    if (row.method === 'GET' || WRITES_WITHOUT_AUDIT.has(route)) return undefined;
    const { rows } = await api.infra.pg.query('SELECT count(*)::int AS n FROM audit_events WHERE operation = $1', [
      route,
    ]);
    return rows[0].n;
  };
  const fx: Fixture = {
    api,
    account,
    admin,
    product: async (pricing = 'flat') =>
      (await admin('POST', '/v1/products', { name: 'fixture', price: 3, currency: 'USD', pricing })).id,
    meter: async () => (await admin('POST', '/v1/meters', { name: 'fixture', unit: 'u', aggregation: 'sum' })).id,
    subscription: async () =>
      (await admin('POST', '/v1/subscriptions', { items: [{ product_id: await fx.product() }] })).id,
    paymentMethod: async () => (await admin('POST', '/v1/billing/payment-methods', cardBody())).id,
    webhook: async () => (await admin('POST', '/v1/webhooks', webhookBody())).id,
    invoice: async () =>
      insertInvoice(api.infra.pg, {
        accountId: account.accountId,
        customerId: account.customerId,
        subscriptionId: await fx.subscription(),
        amount: '3',
        periodStart: '2026-01-01',
        periodEnd: '2026-01-31',
        lines: [
          { product_id: await fx.product(), description: 'fixture', quantity: '1', unit_price: '3', amount: '3' },
        ],
      }),
    draftInvoice: async () =>
      insertInvoice(api.infra.pg, {
        accountId: account.accountId,
        customerId: account.customerId,
        subscriptionId: await fx.subscription(),
        status: 'draft',
        amount: '0',
        periodStart: '2026-01-01',
        periodEnd: '2026-01-31',
      }),
    testClock: async () => (await admin('POST', '/v1/test_clocks', { frozen_time: '2026-11-10T00:00:00Z' })).id,
    customer: async () =>
      (await admin('POST', '/v1/customers', { name: 'fixture', external_id: `matrix-fixture-${++customers}` })).id,
    taxRate: async () =>
      (await admin('POST', '/v1/tax_rates', { name: 'fixture', percentage: 10, inclusive: true })).id,
    coupon: async () =>
      (await admin('POST', '/v1/coupons', { name: 'fixture', percent_off: 10, duration: 'forever' })).id,
    deploymentMeter: async () =>
      (await admin('POST', '/v1/meters', { name: 'd', unit: 'u', aggregation: 'sum', scope: 'deployment' })).id,
    entitlement: async () =>
      (
        await admin('POST', '/v1/entitlements', {
          customer_id: account.customerId,
          feature: `matrix-${++entitlements}`,
          type: 'metered',
          meter_id: await fx.meter(),
          limit: 100,
          period: 'month',
          overage: 'block',
        })
      ).id,
    plan: async () =>
      (
        await admin('POST', '/v1/plans', {
          name: 'fixture',
          currency: 'USD',
          interval: 'month',
          items: [{ product_id: await fx.product() }],
        })
      ).id,
    customerOwn: () =>
      (customerOwn ??= (async () => {
        const made = await admin('POST', '/v1/customers', { name: 'owner', external_id: 'matrix-owner' });
        const token = await customerToken(api.infra, made.account_id);
        const asCustomer = async (method: string, path: string, body?: unknown) => {
          const r = await send(method, path, token, body);
          if (r.status >= 300) throw new Error(`fixture ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
          return r.body;
        };
        const subscription = (
          await admin('POST', '/v1/subscriptions', {
            customer_id: made.id,
            items: [{ product_id: await fx.product() }],
          })
        ).id;
        const own = { customerId: made.id, accountId: made.account_id, subscription } as CustomerOwn;
        own.invoice = await invoiceOf(own);
        own.creditNote = (
          await admin('POST', `/v1/billing/invoices/${own.invoice}/credit-notes`, { amount: 1, reason: 'matrix' })
        ).id;
        own.paymentMethod = (await asCustomer('POST', '/v1/billing/payment-methods', cardBody())).id;
        own.credit = (
          await admin('POST', '/v1/billing/credits', {
            customer_id: made.id,
            amount: 1,
            currency: 'USD',
            description: 'm',
          })
        ).id;
        own.meter = (await asCustomer('POST', '/v1/meters', { name: 'own', unit: 'u', aggregation: 'sum' })).id;
        own.entitlement = (
          await admin('POST', '/v1/entitlements', { customer_id: made.id, feature: 'matrix-own', type: 'boolean' })
        ).id;
        return own;
      })()),
    customerInvoice: async () => invoiceOf(await fx.customerOwn()),
    operatorUser: (role) => operatorUser(api.infra.pg, account.accountId, role),
    usageMeter: () =>
      (usageMeter ??= (async () => {
        const id = await fx.meter();
        await waitForIngressMeter(api.url, account.tokens.write, id);
        return id;
      })()),
  };

  for (const row of ROWS) {
    t.test(`${row.method} ${row.route} needs ${row.scope}`, async (t) => {
      for (const level of ['none', 'read', 'write', 'admin'] as const) {
        const { path, body } = await row.request(fx);
        const token = level === 'none' ? undefined : account.tokens[level];
        const audited = await auditCount(row);
        const res = await send(row.method, path, token, body);
        const allowed = row.scope === 'public' || (level !== 'none' && RANK[level] >= RANK[row.scope]);
        if (allowed) {
          t.equal(res.status, row.success, `${level}: ${row.success} (${JSON.stringify(res.body)?.slice(0, 200)})`);
          if (audited !== undefined && res.status === row.success)
            t.ok((await auditCount(row))! > audited, `${level}: the write left an audit event naming its route`);
          if (row.verify && res.status === row.success)
            t.equal(row.verify(res.body), undefined, `${level}: the answer is a real success`);
        } else if (row.othersBelowScope && level !== 'none' && RANK[level] >= RANK[row.routeScope ?? 'read']) {
          t.equal(res.status, 404, `${level}: 404, another account's to this token (${JSON.stringify(res.body)})`);
          t.equal(res.body?.code, 'not_found');
        } else if (level === 'none') {
          t.equal(res.status, 401, 'no token: 401');
          t.equal(res.body.code, 'unauthorized');
          t.match(res.headers.get('www-authenticate'), /^Bearer /);
        } else {
          t.equal(res.status, 403, `${level}: 403`);
          t.equal(res.body.code, 'insufficient_scope');
          const named = row.routeScope && RANK[level] < RANK[row.routeScope] ? row.routeScope : row.scope;
          t.match(res.headers.get('www-authenticate'), new RegExp(`error="insufficient_scope".*scope="${named}"`));
        }
      }
    });
  }

  // Operator roles (docs/roles.md): every row again with an admin-scoped token of a user of each role; what the
  // role may do comes from the one route table (services/roles/api/route-areas.ts) and the one policy.
  const table = permissionTable();
  // One card for all of them: card additions are rate-limited per account (20 an hour).
  let card: Promise<string> | undefined;
  const fxRoles: Fixture = { ...fx, paymentMethod: () => (card ??= fx.paymentMethod()) };
  const roleTokens = Object.fromEntries(
    await Promise.all(
      OPERATOR_ROLES.map(async (role) => [
        role,
        await roleToken(api.infra, account.accountId, await operatorUser(api.infra.pg, account.accountId, role), role),
      ]),
    ),
  ) as Record<OperatorRole, string>;
  for (const row of ROWS.filter((r) => r.scope !== 'public')) {
    const permission = table.get(`${row.method} ${row.route}`);
    t.test(`${row.method} ${row.route} by role (${permission?.area ?? 'no area'})`, async (t) => {
      if (!t.ok(permission, 'the route has a row in the role table')) return;
      for (const role of OPERATOR_ROLES) {
        const { path, body } = await row.request(fxRoles);
        const res = await send(row.method, path, roleTokens[role], body);
        if (roleAllows(role, permission!.area, permission!.access)) {
          t.equal(res.status, row.success, `${role}: ${row.success} (${JSON.stringify(res.body)?.slice(0, 200)})`);
        } else {
          t.equal(res.status, 403, `${role}: 403 (${JSON.stringify(res.body)?.slice(0, 120)})`);
          t.equal(res.body?.code, 'role_forbidden', `${role}: role_forbidden`);
        }
      }
    });
  }

  t.test('a customer of the operator: what a subscription bills is the operator’s', async (t) => {
    const [customer] = await createCustomers(api.url, account.tokens.admin, 1, 'matrix-terms');
    const tokens = {
      read: await customerToken(api.infra, customer!.accountId, ['read']),
      write: await customerToken(api.infra, customer!.accountId, ['read', 'write']),
    };
    for (const row of CUSTOMER_ROWS)
      for (const level of ['read', 'write'] as const) {
        const { path, body } = await row.request(fx, customer!);
        const res = await send(row.method, path, tokens[level], body);
        const want = row[level];
        t.equal(
          res.status,
          want.status,
          `${level}: ${row.what} → ${want.status} (${JSON.stringify(res.body)?.slice(0, 160)})`,
        );
        if (want.code) t.equal(res.body.code, want.code, `${level}: ${row.what}: ${want.code}`);
      }
  });

  t.test('every route this file covers is served, and every served /v1 route has a row', async (t) => {
    const served = new Set(api.service.server.routes.map((r) => `${r.method} ${r.path}`));
    for (const row of ROWS) t.ok(served.has(`${row.method} ${row.route}`), `${row.method} ${row.route} is served`);
    const covered = new Set(ROWS.map((r) => `${r.method} ${r.route}`));
    const v1 = api.service.server.routes.filter((r) => r.path.startsWith('/v1/'));
    for (const r of v1) t.ok(covered.has(`${r.method} ${r.path}`), `${r.method} ${r.path} has a row`);
  });
});
