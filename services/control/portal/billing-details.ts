import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { ForbiddenError } from '../../../shared/errors.js';
import { readPortalSettings } from '../../domain/portal-settings/settings.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { esc } from '../hosted/templates.js';
import { asCustomer, type ApiRoutes } from './api-call.js';
import type { PortalVisit } from './access.js';
import { visitPage } from './layout.js';
import { csrfField, portalGet, portalPost } from './route.js';

const ADDRESS = [
  ['line1', 'Street and number'],
  ['city', 'City'],
  ['state', 'State or region'],
  ['zip', 'Postal code'],
] as const;

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
    const field = (name: string, label: string, value: string) =>
      `<label for="${name}">${esc(label)}</label><input type="text" id="${name}" name="${name}" value="${esc(value)}"${editable ? '' : ' disabled'}>`;
    return visitPage(deps.config, visit, {
      title: 'Billing details',
      current: '/portal/billing-details',
      flash: ctx.query.get('done') === 'saved' ? 'Your billing details are saved.' : undefined,
      body: `<form method="post" action="/portal/billing-details" id="billing-form">${csrfField(visit)}
<fieldset><legend>Billing address</legend>
${ADDRESS.map(([k, label]) => field(k, label, a[k] ?? '')).join('\n')}
</fieldset>
<fieldset><legend>Tax id</legend>
${field('tax_id_type', 'Kind (eu_vat, gb_vat, us_ein…)', tax.type)}
${field('tax_id_value', 'Number', tax.value)}
</fieldset>
${editable ? '<button type="submit" id="save-billing">Save</button>' : '<p class="note" id="billing-locked">Ask us to change these details.</p>'}
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
          billing_address: Object.fromEntries(ADDRESS.map(([k]) => [k, (form[k] ?? '').trim()])),
          tax_ids: taxType || taxValue ? [{ type: taxType, value: taxValue }] : [],
        },
      });
      return '/portal/billing-details?done=saved';
    },
  );
}
