/**
 * The public API's resources as the console reads them: the Static types of the schemas that validate and
 * document them on the server (shared/api/), so the console cannot drift from the API. Type-only imports
 * (nothing of the schemas is bundled) but the event types, which the webhook form lists.
 */
import type Type from 'typebox';
import type { MeterSchema } from '../../../../../shared/api/meters.js';
import type { MeterUsageSchema } from '../../../../../shared/api/usage.js';
import type { ProductSchema } from '../../../../../shared/api/products.js';
import type { SubscriptionSchema } from '../../../../../shared/api/subscriptions.js';
import type { InvoiceSchema, UpcomingInvoiceSchema } from '../../../../../shared/api/invoices.js';
import type { PaymentMethodSchema } from '../../../../../shared/api/payment-methods.js';
import type { CreatedWebhookSchema, DeliverySchema } from '../../../../../shared/api/webhooks.js';
import type { CustomerSchema } from '../../../../../shared/api/customers.js';
import type { CheckAnswerSchema, EntitlementSchema } from '../../../../../shared/api/entitlements.js';
import type { AlertSchema } from '../../../../../shared/api/alerts.js';
import type { PlanSchema } from '../../../../../shared/api/plans.js';
import type { CouponSchema } from '../../../../../shared/api/coupons.js';
import type { SellerSettingsSchema } from '../../../../../shared/api/seller-settings.js';
import type { PortalSettingsSchema } from '../../../../../shared/api/portal-settings.js';

export { EVENT_TYPES as WEBHOOK_EVENTS } from '../../../../../shared/vocabulary.js';

export type Meter = Type.Static<typeof MeterSchema>;
export type UsageReport = Type.Static<typeof MeterUsageSchema>;
export type Product = Type.Static<typeof ProductSchema>;
export type Subscription = Type.Static<typeof SubscriptionSchema>;
/** A stored invoice, or the upcoming one (`status: 'draft'`, `id: null`). */
export type Invoice = Type.Static<typeof InvoiceSchema> | Type.Static<typeof UpcomingInvoiceSchema>;
export type PaymentMethod = Type.Static<typeof PaymentMethodSchema>;
/** A webhook; `secret` only in the 201 answer, when the server generated it. */
export type Webhook = Type.Static<typeof CreatedWebhookSchema>;
export type Delivery = Type.Static<typeof DeliverySchema>;
/** A customer of the deployment (operator mode): an account, named by the operator's external id. */
export type Customer = Type.Static<typeof CustomerSchema>;
/** An entitlement of a customer to a feature, and a check's answer (docs/entitlements.md). */
export type Entitlement = Type.Static<typeof EntitlementSchema>;
export type EntitlementCheck = Type.Static<typeof CheckAnswerSchema>;
/** A usage or spend alert (docs/alerts.md); `customer_id: null` on an operator's deployment-wide alert. */
export type Alert = Type.Static<typeof AlertSchema>;
/** A version of a plan (docs/plans.md). */
export type Plan = Type.Static<typeof PlanSchema>;
/** A coupon of the deployment (docs/coupons.md). */
export type Coupon = Type.Static<typeof CouponSchema>;
/** The seller and branding on every document and email (docs/seller-settings.md). */
export type SellerSettings = Type.Static<typeof SellerSettingsSchema>;
/** What the deployment's customers may do themselves: the console offers a customer only that. */
export type PortalSettings = Type.Static<typeof PortalSettingsSchema>;
