import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { oauthRoutes } from '../../control/oauth/module.js';
import { ssoModule } from '../../control/sso/module.js';
import { idempotencyModule } from './idempotency-purge.js';
import { productsModule } from '../../control/products/module.js';
import { metersModule } from '../../control/meters/module.js';
import { customersModule } from '../../control/customers/module.js';
import { taxRatesModule } from '../../control/tax-rates/module.js';
import { couponsModule } from '../../control/coupons/module.js';
import { promotionCodesModule } from '../../control/promotion-codes/module.js';
import { subscriptionsModule } from '../../control/subscriptions/module.js';
import { openApiModule } from './openapi.js';
import { billingInfoModule } from '../../control/billing-info/module.js';
import { paymentMethodsModule } from '../../control/payment-methods/module.js';
import { processorsModule } from '../../control/processors/module.js';
import { webhooksModule } from '../../control/webhooks/module.js';
import { eventsModule } from '../../control/events/module.js';
import { ingressModule } from '../../ingress/module.js';
import { usageQueryModule } from '../../control/usage/module.js';
import { correctionsModule } from '../../control/corrections/module.js';
import { invoicesModule } from '../../control/invoices/module.js';
import { hostedModule } from '../../control/hosted/module.js';
import { checkoutModule } from '../../control/checkout/module.js';
import { creditsModule } from '../../control/credits/module.js';
import { creditTopUpsModule } from '../../control/credit-top-ups/module.js';
import { creditSettingsModule } from '../../control/credit-settings/module.js';
import { creditNotesModule } from '../../control/credit-notes/module.js';
import { testClocksModule } from '../../control/test-clocks/module.js';
import { entitlementsModule } from '../../control/entitlements/module.js';
import { alertsModule } from '../../control/alerts/module.js';
import { exportsModule } from '../../control/exports/module.js';
import { plansModule } from '../../control/plans/module.js';
import { portalSettingsModule } from '../../control/portal-settings/module.js';
import { sellerSettingsModule } from '../../control/seller-settings/module.js';
import { consoleModule } from '../../console/module.js';
import { auditModule } from '../../control/audit/module.js';
import { usersModule } from '../../control/users/module.js';
import { portalModule } from '../../control/portal/module.js';

/** Every route module the api mounts, in registration order. Each area adds its factory here. */
export const ROUTE_MODULES: RouteModuleFactory[] = [
  oauthRoutes,
  ssoModule,
  idempotencyModule,
  productsModule,
  metersModule,
  customersModule,
  taxRatesModule,
  couponsModule,
  promotionCodesModule,
  subscriptionsModule,
  openApiModule,
  billingInfoModule,
  paymentMethodsModule,
  processorsModule,
  webhooksModule,
  eventsModule,
  ingressModule,
  usageQueryModule,
  correctionsModule,
  invoicesModule,
  hostedModule,
  checkoutModule,
  creditsModule,
  creditTopUpsModule,
  creditSettingsModule,
  creditNotesModule,
  testClocksModule,
  entitlementsModule,
  alertsModule,
  exportsModule,
  plansModule,
  portalSettingsModule,
  auditModule,
  usersModule,
  sellerSettingsModule,
  portalModule,
  consoleModule,
];
