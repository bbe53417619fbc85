import { useEffect, useErrorBoundary, useMemo, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { ErrorBox } from './ui/components.js';
import { App, type AppContext } from './ui/app-context.js';
import { MeterPage, MetersPage } from './pages/meters.js';
import { SubscriptionsPage } from './pages/subscriptions.js';
import { InvoicePage, InvoicesPage, UpcomingInvoicePage } from './pages/invoices.js';
import { PaymentMethodsPage } from './pages/payment-methods.js';
import { WebhookPage, WebhooksPage } from './pages/webhooks.js';
import { ProductsPage } from './pages/products.js';
import { CustomerPage, CustomersPage } from './pages/customers.js';
import { EntitlementsPage } from './pages/entitlements.js';
import { AlertsPage } from './pages/alerts.js';
import { PlansPage } from './pages/plans.js';
import { CouponsPage } from './pages/coupons.js';
import { AuditPage } from './pages/audit.js';
import { SellerPage } from './pages/seller.js';
import type { ApiClient } from './lib/api.js';
import type { TokenSession } from './lib/tokens.js';

/** Pages only operators (admin scope) see. */
const OPERATOR_NAV = new Set(['/customers', '/coupons', '/audit', '/seller']);

const NAV = [
  ['/meters', 'Meters'],
  ['/subscriptions', 'Subscriptions'],
  ['/invoices', 'Invoices'],
  ['/payment-methods', 'Payment methods'],
  ['/alerts', 'Alerts'],
  ['/webhooks', 'Webhooks'],
  ['/entitlements', 'Entitlements'],
  ['/plans', 'Plans'],
  ['/products', 'Products'],
  ['/customers', 'Customers'],
  ['/coupons', 'Coupons'],
  ['/audit', 'Audit log'],
  ['/seller', 'Seller'],
] as const;

const currentRoute = () => location.hash.replace(/^#/, '') || '/meters';

function Page({ route }: { route: string }) {
  const [, section, id, extra] = route.split('/');
  switch (section) {
    case 'meters':
      return id ? <MeterPage id={id} /> : <MetersPage />;
    case 'subscriptions':
      return <SubscriptionsPage />;
    case 'invoices':
      if (id === 'upcoming' && extra) return <UpcomingInvoicePage subscriptionId={extra} />;
      return id ? <InvoicePage id={id} /> : <InvoicesPage />;
    case 'payment-methods':
      return <PaymentMethodsPage />;
    case 'alerts':
      return <AlertsPage />;
    case 'webhooks':
      return id ? <WebhookPage id={id} /> : <WebhooksPage />;
    case 'plans':
      return <PlansPage />;
    case 'products':
      return <ProductsPage />;
    case 'entitlements':
      return <EntitlementsPage />;
    case 'customers':
      return id ? <CustomerPage id={id} /> : <CustomersPage />;
    case 'coupons':
      return <CouponsPage />;
    case 'audit':
      return <AuditPage />;
    case 'seller':
      return <SellerPage />;
    default:
      return (
        <div class="error" role="alert">
          <strong>There is no console page {route}.</strong> <a href="#/meters">Go to meters</a>
        </div>
      );
  }
}

/** A page that throws while rendering shows the error instead of leaving a blank page. */
function Guard({ children }: { children: ComponentChildren }) {
  const [error, reset] = useErrorBoundary();
  if (error) return <ErrorBox error={error} onRetry={reset} />;
  return <>{children}</>;
}

/** The signed-in console: navigation and the page the hash names. */
export function Console({ api, session, onSignOut }: { api: ApiClient; session: TokenSession; onSignOut: () => void }) {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const ctx = useMemo<AppContext>(() => ({ api, session, navigate: (r) => (location.hash = r) }), [api, session]);
  const section = '/' + (route.split('/')[1] ?? '');
  return (
    <App.Provider value={ctx}>
      <div class="layout">
        <nav class="sidebar" aria-label="console">
          <div class="brand">meterline</div>
          {NAV.filter(([path]) => session.hasScope('admin') || !OPERATOR_NAV.has(path)).map(([path, label]) => (
            <a key={path} href={`#${path}`} class={section === path ? 'current' : ''}>
              {label}
            </a>
          ))}
          <div class="who">
            <span>scope: {session.scopes.join(' ')}</span>
            <button type="button" class="link" onClick={onSignOut}>
              Sign out
            </button>
          </div>
        </nav>
        <main>
          <Guard key={route}>
            <Page route={route} />
          </Guard>
        </main>
      </div>
    </App.Provider>
  );
}
