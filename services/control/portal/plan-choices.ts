import { esc } from '../hosted/templates.js';
import type { PortalVisit } from './access.js';
import { asCustomer, numText, type ApiRoutes } from './api-call.js';
import { csrfField } from './route.js';
import { OVERVIEW_LABELS } from '../../domain/portal/overview-texts.js';

/**
 * The change-plan form of a plan subscription: the other plans the customer may read that bill in the same currency
 * and periods (a change keeps both). Which way it goes — now, pro-rated, or at the period's end — is the API's rule
 * (POST /v1/subscriptions/{id}/plan_change: an upgrade now, a downgrade at the period's end).
 */
export async function planChoices(api: ApiRoutes, visit: PortalVisit, sub: any, _plan: any): Promise<string> {
  const plans = (await asCustomer(visit, api('GET /v1/plans'), { query: { per_page: '100' } })).data.filter(
    (p: any) =>
      p.id !== sub.plan_id &&
      p.currency === sub.currency &&
      p.interval === sub.interval &&
      numText(p.interval_count) === numText(sub.interval_count),
  );
  if (!plans.length) return '';
  const id = esc(sub.id);
  const l = OVERVIEW_LABELS[visit.locale];
  return `<form method="post" action="/portal/subscriptions/${id}/plan" class="change-plan">${csrfField(visit)}
<label for="plan-choice-${id}">${esc(l.changePlan)}</label>
<select id="plan-choice-${id}" name="plan_id">${plans.map((p: any) => `<option value="${esc(p.id)}">${esc(p.name)}</option>`).join('')}</select>
<button type="submit" id="change-plan-${id}">${esc(l.changePlan)}</button>
<p class="note">${esc(l.planChangeNote)}</p>
</form>`;
}
