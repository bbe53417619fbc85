import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { mergePortalSettings, portalSettingsRow } from './store.js';

/**
 * Portal settings (issue 49, docs/operator-mode.md "Who changes a subscription's terms"): what the deployment's
 * customers may do themselves, set by the operator (admin). One row per deployment; the stored object holds only
 * what the operator set, merged over these defaults, so a new setting is a new key here and nothing else.
 */
export interface PortalSettings {
  /** On a subscription the operator made: the customer may replace its items. */
  customer_can_change_items: boolean;
  /** On a subscription the operator made: the customer may cancel it, now or at the period's end (and undo that). */
  customer_can_cancel: boolean;
  /** On a subscription the operator made: the customer may set or remove its billing_threshold. */
  customer_can_change_threshold: boolean;
  /** Customers may subscribe themselves to the catalog (and change those subscriptions as their own). */
  self_serve_subscriptions: boolean;
  /** In the customer portal: move a plan subscription to another plan (upgrade now, downgrade at period end). */
  portal_change_plan: boolean;
  /** In the customer portal: change the billing address and tax ids (harmless: the customer's own details). */
  portal_update_billing_details: boolean;
  /** Customers may buy prepaid credit themselves (POST /v1/credit_top_ups, docs/credits.md "Prepaid credit"). */
  customer_can_buy_credit: boolean;
}

export const PORTAL_SETTING_DEFAULTS: Readonly<PortalSettings> = Object.freeze({
  customer_can_change_items: false,
  customer_can_cancel: false,
  customer_can_change_threshold: false,
  self_serve_subscriptions: true,
  portal_change_plan: false,
  portal_update_billing_details: true,
  customer_can_buy_credit: false,
});

export const PORTAL_SETTING_NAMES = Object.keys(PORTAL_SETTING_DEFAULTS) as (keyof PortalSettings)[];

type Queryable = Pick<PgPool, 'query'> | PgClient;

/** The settings in effect, with when the operator last changed them (null: never). */
export async function readPortalSettings(q: Queryable): Promise<{ settings: PortalSettings; updatedAt: Date | null }> {
  const row = await portalSettingsRow<Partial<PortalSettings>>(q);
  return { settings: merged(row?.settings ?? {}), updatedAt: row?.updated_at ?? null };
}

/** Sets the given settings (the others keep their value) in one statement; returns the settings in effect. */
export async function changePortalSettings(
  q: Queryable,
  change: Partial<PortalSettings>,
): Promise<{ settings: PortalSettings; updatedAt: Date }> {
  const row = await mergePortalSettings(q, change);
  return { settings: merged(row.settings), updatedAt: row.updated_at };
}

/** Only known keys with boolean values count: a key a later version removed is ignored. */
function merged(stored: Partial<PortalSettings>): PortalSettings {
  const out = { ...PORTAL_SETTING_DEFAULTS };
  for (const k of PORTAL_SETTING_NAMES) if (typeof stored[k] === 'boolean') out[k] = stored[k];
  return out;
}
