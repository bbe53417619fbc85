import Type from 'typebox';

/** The hosted pages' JSON (docs/payments.md "Hosted pages"): what their script posts and what it is answered. */

const PaymentMethodId = Type.String({
  pattern: '^pm_[A-Za-z0-9_]{1,250}$',
  description: "a Stripe PaymentMethod id (`pm_…`) from Stripe's card element",
});

/** POST /hosted/invoices/{id}/{token}/pay */
export const HostedPayBody = Type.Object(
  {
    attempt: Type.Integer({
      minimum: 1,
      maximum: 1000,
      description:
        'the attempt this payment makes, as the page was rendered with it: when the invoice already has it (a double click, a refresh), its outcome is answered and nothing is charged again',
    }),
    payment_method: Type.Optional(PaymentMethodId),
  },
  { additionalProperties: false },
);
export type HostedPayBody = Type.Static<typeof HostedPayBody>;

/** POST /hosted/cards/{token}/payment-method */
export const HostedSaveCardBody = Type.Object({ payment_method: PaymentMethodId }, { additionalProperties: false });
export type HostedSaveCardBody = Type.Static<typeof HostedSaveCardBody>;

export const HostedPaymentSchema = Type.Object(
  {
    status: Type.Enum(['paid', 'failed', 'requires_action', 'open'], {
      description: 'paid; failed (message says why); requires_action: run 3-D Secure with client_secret, then /confirm',
    }),
    message: Type.Optional(Type.String()),
    code: Type.Optional(
      Type.String({
        description:
          'failed: the failure code (card_declined, insufficient_funds…); open: why (payment_pending, authentication_unavailable, authentication_incomplete) — the page shows its own text for it',
      }),
    ),
    client_secret: Type.Optional(Type.String()),
    payment_method: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    next_attempt: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

export const SetupIntentSecretSchema = Type.Object(
  { client_secret: Type.String({ description: "the SetupIntent's client secret, for Stripe.js confirmCardSetup" }) },
  { additionalProperties: false },
);

/** POST /v1/billing/payment-method-links */
export const CreatePaymentMethodLinkBody = Type.Object(
  {
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'operators (admin): the customer the link is for; any other token may name only itself',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePaymentMethodLinkBody = Type.Static<typeof CreatePaymentMethodLinkBody>;

export const PaymentMethodLinkSchema = Type.Object(
  {
    id: Type.String({ description: 'hcl_…' }),
    url: Type.String({
      format: 'uri',
      description:
        'the hosted "update payment method" page; shown only now (only its hash is stored); the customer\'s earlier links stop working',
    }),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export const HostedInvoiceLinkSchema = Type.Object(
  {
    invoice_id: Type.String(),
    hosted_invoice_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description: 'the new link after a rotation; null after a revocation',
    }),
  },
  { additionalProperties: false },
);
