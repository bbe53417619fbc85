import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { ForbiddenError } from '../../../shared/errors.js';
import { readPortalSettings } from '../../domain/portal-settings/settings.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { esc } from '../hosted/templates.js';
import { asCustomer, type ApiRoutes } from './api-call.js';
import type { PortalVisit } from './access.js';
import { visitPage } from './layout.js';
import { csrfField, portalGet, portalPost } from './route.js';
import { ACCOUNT_LABELS } from '../../domain/portal/account-texts.js';
import { PORTAL_LABELS } from '../../domain/portal/portal-texts.js';

/** The address fields the portal edits (their labels: services/domain/portal/account-texts.ts `address`). */
const ADDRESS = ['line1', 'city', 'state', 'zip'] as const;

/**
 * The customer's own customer record, read and changed through the operator's /v1/customers/:id operations with the
 * id fixed to the session's customer (never taken from the request): the portal lets it change only its billing
 * address and tax id, and only while portal setting portal_update_billing_details is on.
 */
async function ownCustomerId(deps: ApiDeps, visit: PortalVisit): Promise<string> {
  return (await customerIdsOfAccounts(deps.pg, [visit.session.account_id])).get(visit.session.account_id)!;
}

export function billingDetailsRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalGet(deps, '/portal/billing-details', 'billing address and tax id', async (visit, ctx) => {
    const { settings } = await readPortalSettings(deps.pg);
    const c = await asCustomer(visit, api('GET /v1/customers/:customer_id'), {
      params: { customer_id: await ownCustomerId(deps, visit) },
    });
    const a = c.billing_address ?? {};
    const tax = c.tax_ids?.[0] ?? { type: '', value: '' };
    const editable = settings.portal_update_billing_details;
    // In the visit's language (services/domain/portal/account-texts.ts).
    const l = ACCOUNT_LABELS[visit.locale];
    const field = (name: string, label: string, value: string) =>
      `<label for="${name}">${esc(label)}</label><input type="text" id="${name}" name="${name}" value="${esc(value)}"${editable ? '' : ' disabled'}>`;
    return visitPage(deps.config, visit, {
      title: PORTAL_LABELS[visit.locale].sections.billingDetails,
      current: '/portal/billing-details',
      flash: ctx.query.get('done') === 'saved' ? l.saved : undefined,
      body: `<form method="post" action="/portal/billing-details" id="billing-form">${csrfField(visit)}
<fieldset><legend>${esc(l.billingAddress)}</legend>
${ADDRESS.map((k) => field(k, l.address[k], a[k] ?? '')).join('\n')}
</fieldset>
<fieldset><legend>${esc(l.taxId)}</legend>
${field('tax_id_type', l.taxKind, tax.type)}
${field('tax_id_value', l.taxNumber, tax.value)}
</fieldset>
${editable ? `<button type="submit" id="save-billing">${esc(l.save)}</button>` : `<p class="note" id="billing-locked">${esc(l.locked)}</p>`}
</form>`,
    });
  });
}

export function updateBillingDetailsRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalPost(
    deps,
    '/portal/billing-details',
    'change the billing address and tax id',
    async (visit, _ctx, form) => {
      if (!(await readPortalSettings(deps.pg)).settings.portal_update_billing_details)
        throw new ForbiddenError(
          'Billing details are changed by the operator on this deployment.',
          'portal_setting_off',
        );
      const taxType = (form.tax_id_type ?? '').trim();
      const taxValue = (form.tax_id_value ?? '').trim();
      await asCustomer(visit, api('PATCH /v1/customers/:customer_id'), {
        params: { customer_id: await ownCustomerId(deps, visit) },
        body: {
          billing_address: Object.fromEntries(ADDRESS.map((k) => [k, (form[k] ?? '').trim()])),
          tax_ids: taxType || taxValue ? [{ type: taxType, value: taxValue }] : [],
        },
      });
      return '/portal/billing-details?done=saved';
    },
  );
}
