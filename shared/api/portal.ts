import Type from 'typebox';

/** The customer portal's API (docs/portal.md). */

/** POST /v1/portal_sessions */
export const CreatePortalSessionBody = Type.Object(
  {
    customer_id: Type.String({ minLength: 1, maxLength: 100, description: 'the customer the portal signs in (cus_…)' }),
    return_url: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'an http(s) URL of the operator’s site: the portal’s "Back" link',
    }),
    locale: Type.Optional(
      Type.String({
        pattern: '^[a-z]{2}(-[A-Z]{2})?$',
        description: 'the pages’ language tag (en, de-DE); default en',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePortalSessionBody = Type.Static<typeof CreatePortalSessionBody>;

export const PortalSessionSchema = Type.Object(
  {
    id: Type.String({ description: 'pts_…' }),
    customer_id: Type.String(),
    url: Type.String({
      description: 'the link to hand the customer: shown only in this answer, opens once, until expires_at',
    }),
    return_url: Type.String(),
    locale: Type.Union([Type.String(), Type.Null()]),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
