import type { PermissionArea } from '../../../shared/auth/roles.js';
import type { RoutePermission } from '../../../shared/http/pipeline.js';

/**
 * The one table of what each authenticated route touches, for operator roles (docs/roles.md; the policy per
 * role is shared/auth/roles.ts). A GET reads its area, any other method writes it, unless the entry says
 * otherwise (the WebSocket ingest is a GET that writes usage). A route missing here is allowed to owners and
 * admins only, and the scope matrix (test/integration/scope-matrix.test.ts) fails until it has its row.
 */
const AREAS: Record<PermissionArea, readonly string[]> = {
  catalog: [
    'GET /v1/products',
    'POST /v1/products',
    'GET /v1/products/:product_id',
    'PATCH /v1/products/:product_id',
    'DELETE /v1/products/:product_id',
    'GET /v1/plans',
    'POST /v1/plans',
    'GET /v1/plans/:plan_id',
    'POST /v1/plans/:plan_id/migrate',
    'POST /v1/plans/:plan_id/versions',
    'GET /v1/coupons',
    'POST /v1/coupons',
    'GET /v1/coupons/:coupon_id',
    'GET /v1/promotion_codes',
    'POST /v1/promotion_codes',
    'GET /v1/promotion_codes/:promotion_code_id',
    'POST /v1/promotion_codes/:promotion_code_id/deactivate',
    'GET /v1/tax_rates',
    'POST /v1/tax_rates',
    'GET /v1/tax_rates/:tax_rate_id',
    'POST /v1/tax_rates/:tax_rate_id/archive',
  ],
  billing: [
    'GET /v1/billing',
    'PATCH /v1/billing',
    'GET /v1/billing/credit-notes',
    'GET /v1/billing/credit-notes/:credit_note_id',
    'GET /v1/billing/credit-notes/:credit_note_id/download',
    'GET /v1/billing/credits',
    'POST /v1/billing/credits',
    'GET /v1/billing/credits/:credit_id',
    'POST /v1/credit_top_ups',
    'GET /v1/credit_top_ups/:top_up_id',
    'GET /v1/credit_settings',
    'PUT /v1/credit_settings',
    'GET /v1/billing/invoices',
    'GET /v1/billing/invoices/:invoice_id',
    'POST /v1/billing/invoices/:invoice_id/credit-notes',
    'GET /v1/billing/invoices/:invoice_id/download',
    'POST /v1/billing/invoices/:invoice_id/finalize',
    'POST /v1/billing/invoices/:invoice_id/lines',
    'POST /v1/billing/invoices/:invoice_id/pay',
    'POST /v1/billing/invoices/:invoice_id/void',
    'GET /v1/billing/invoices/upcoming',
    'POST /v1/billing/invoices/:invoice_id/hosted-link/revoke',
    'POST /v1/billing/invoices/:invoice_id/hosted-link/rotate',
    'POST /v1/billing/payment-method-links',
    'GET /v1/billing/payment-methods',
    'POST /v1/billing/payment-methods',
    'GET /v1/billing/payment-methods/:payment_method_id',
    'PATCH /v1/billing/payment-methods/:payment_method_id/default',
    'POST /v1/checkout_sessions',
    'GET /v1/checkout_sessions/:checkout_session_id',
    'GET /v1/subscriptions',
    'POST /v1/subscriptions',
    'GET /v1/subscriptions/:subscription_id',
    'PATCH /v1/subscriptions/:subscription_id',
    'POST /v1/subscriptions/:subscription_id/plan_change',
    'GET /v1/test_clocks',
    'POST /v1/test_clocks',
    'GET /v1/test_clocks/:clock_id',
    'DELETE /v1/test_clocks/:clock_id',
    'POST /v1/test_clocks/:clock_id/advance',
    'POST /v1/test_clocks/:clock_id/customers',
    'GET /v1/exports',
    'POST /v1/exports',
    'GET /v1/exports/:export_id',
    'GET /v1/export_schedules',
    'POST /v1/export_schedules',
    'GET /v1/export_schedules/:schedule_id',
    'DELETE /v1/export_schedules/:schedule_id',
  ],
  customers: [
    'GET /v1/customers',
    'POST /v1/customers',
    'GET /v1/customers/:customer_id',
    'PATCH /v1/customers/:customer_id',
    'POST /v1/portal_sessions',
  ],
  metering: [
    'GET /v1/meters',
    'POST /v1/meters',
    'GET /v1/meters/:meter_id',
    'PATCH /v1/meters/:meter_id',
    'GET /v1/meters/:meter_id/usage',
    'POST /v1/meters/:meter_id/usage',
    'GET /v1/meters/:meter_id/usage/corrections',
    'POST /v1/meters/:meter_id/usage/corrections',
    'POST /v1/usage',
    'GET /v1/usage/stream',
    'GET /v1/entitlements',
    'POST /v1/entitlements',
    'GET /v1/entitlements/check',
    'GET /v1/entitlements/:entitlement_id',
    'PATCH /v1/entitlements/:entitlement_id',
    'DELETE /v1/entitlements/:entitlement_id',
    'POST /v1/entitlements/:entitlement_id/grants',
    'GET /v1/alerts',
    'POST /v1/alerts',
    'GET /v1/alerts/:alert_id',
    'DELETE /v1/alerts/:alert_id',
  ],
  webhooks: [
    'GET /v1/webhooks',
    'POST /v1/webhooks',
    'GET /v1/webhooks/:webhook_id',
    'PATCH /v1/webhooks/:webhook_id',
    'DELETE /v1/webhooks/:webhook_id',
    'GET /v1/webhooks/:webhook_id/deliveries',
    'POST /v1/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    'POST /v1/webhooks/:webhook_id/rotate-secret',
    'GET /v1/events',
    'GET /v1/events/:event_id',
  ],
  clients: [],
  users: [
    'GET /v1/users',
    'PATCH /v1/users/:user_id',
    'GET /v1/customers/:customer_id/users',
    'POST /v1/customers/:customer_id/users',
  ],
  settings: [
    'GET /v1/portal_settings',
    'PATCH /v1/portal_settings',
    'GET /v1/seller_settings',
    'PATCH /v1/seller_settings',
  ],
  audit: ['GET /v1/audit_events'],
};

/** Reads that change something: the entry's access instead of the method's. */
const WRITES_BY_GET = new Set(['GET /v1/usage/stream']);

const TABLE = new Map<string, RoutePermission>();
for (const [area, routes] of Object.entries(AREAS) as [PermissionArea, readonly string[]][])
  for (const key of routes) {
    if (TABLE.has(key)) throw new Error(`route-areas: ${key} is listed twice`);
    const method = key.slice(0, key.indexOf(' '));
    TABLE.set(key, {
      area,
      access: WRITES_BY_GET.has(key) || (method !== 'GET' && method !== 'HEAD') ? 'write' : 'read',
    });
  }

/** What `METHOD /pattern` touches; undefined for a route not in the table. */
export function routePermission(method: string, pattern: string): RoutePermission | undefined {
  return TABLE.get(`${method} ${pattern}`);
}

/** Every route of the table (the scope matrix checks each served route is here). */
export function permissionTable(): ReadonlyMap<string, RoutePermission> {
  return TABLE;
}
