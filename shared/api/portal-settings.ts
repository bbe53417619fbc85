import Type from 'typebox';

/** Portal settings (docs/operator-mode.md "Who changes a subscription's terms"): every token reads them, admin changes them. */
const settingFields = {
  customer_can_change_items: Type.Boolean({
    description: 'on a subscription the operator made, the customer may replace its items (default false)',
  }),
  customer_can_cancel: Type.Boolean({
    description: 'on a subscription the operator made, the customer may cancel it (default false)',
  }),
  customer_can_change_threshold: Type.Boolean({
    description:
      'on a subscription the operator made, the customer may set or remove its billing_threshold (default false)',
  }),
  self_serve_subscriptions: Type.Boolean({
    description:
      'customers may subscribe themselves to the catalog and change those subscriptions (default true); false: only the operator creates and changes subscriptions',
  }),
  portal_change_plan: Type.Boolean({
    description:
      'in the customer portal (docs/portal.md), the customer may move its plan subscription to another plan of the same currency and interval: an upgrade now, pro-rated, a downgrade at the period’s end (default false)',
  }),
  portal_update_billing_details: Type.Boolean({
    description: 'in the customer portal, the customer may change its billing address and tax ids (default true)',
  }),
  customer_can_buy_credit: Type.Boolean({
    description: 'customers may buy prepaid credit themselves, POST /v1/credit_top_ups (default false)',
  }),
};

export const PortalSettingsSchema = Type.Object(
  {
    ...settingFields,
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'when the operator last changed them; null: all at their defaults',
    }),
  },
  { additionalProperties: false },
);

export const UpdatePortalSettingsBody = Type.Object(
  {
    customer_can_change_items: Type.Optional(settingFields.customer_can_change_items),
    customer_can_cancel: Type.Optional(settingFields.customer_can_cancel),
    customer_can_change_threshold: Type.Optional(settingFields.customer_can_change_threshold),
    self_serve_subscriptions: Type.Optional(settingFields.self_serve_subscriptions),
    portal_change_plan: Type.Optional(settingFields.portal_change_plan),
    portal_update_billing_details: Type.Optional(settingFields.portal_update_billing_details),
    customer_can_buy_credit: Type.Optional(settingFields.customer_can_buy_credit),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdatePortalSettingsBody = Type.Static<typeof UpdatePortalSettingsBody>;
