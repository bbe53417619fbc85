import Type from 'typebox';
import { PaginationQuery } from '../http/pagination.js';
import { EVENT_TYPES } from '../vocabulary.js';
import { MAX_URL_LENGTH } from '../vocabulary.js';

const Url = Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'https:// URL of a public host' });
const Events = Type.Array(Type.Enum([...EVENT_TYPES]), {
  minItems: 1,
  uniqueItems: true,
  description: 'event types to receive',
});
const Secret = Type.String({
  minLength: 16,
  maxLength: 256,
  description: 'signing secret (write-only); HMAC-SHA256 key of X-Webhook-Signature',
});
const Status = Type.Enum(['enabled', 'disabled']);

export const WEBHOOK_SCOPES = ['account', 'deployment'] as const;
const Scope = Type.Enum([...WEBHOOK_SCOPES], {
  description:
    'account (default): this account’s events; deployment (admin only): every customer’s events, each naming its customer (customer_id, external_id)',
});

export const CreateWebhookBody = Type.Object(
  { url: Url, events: Events, secret: Type.Optional(Secret), scope: Type.Optional(Scope) },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    status: Type.Optional(Status),
    secret: Type.Optional(Secret),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const WebhookSchema = Type.Object(
  {
    id: Type.String({ description: 'wh_…' }),
    url: Type.String(),
    events: Type.Array(Type.Enum([...EVENT_TYPES])),
    status: Status,
    scope: Scope,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

/** The 201 of a creation without a secret carries the generated one, once. */
export const CreatedWebhookSchema = Type.Object(
  {
    ...WebhookSchema.properties,
    secret: Type.Optional(
      Type.String({ description: 'present only when the server generated the secret; shown this once' }),
    ),
  },
  { additionalProperties: false },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'whd_…' }),
    event_id: Type.String({ description: 'evt_…' }),
    event_type: Type.Enum([...EVENT_TYPES]),
    attempt: Type.Integer({ minimum: 1 }),
    status: Type.Enum(['pending', 'succeeded', 'failed']),
    response_status: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'request duration; null until attempted',
    }),
    created_at: Type.String({ format: 'date-time', description: 'when the attempt was scheduled' }),
    attempted_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'when the request was sent; null while the attempt is pending',
    }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);

export const ListWebhooksQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });

export type CreateWebhookInput = Type.Static<typeof CreateWebhookBody>;
export type UpdateWebhookInput = Type.Static<typeof UpdateWebhookBody>;

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  scope: 'account' | 'deployment';
  created_at: string;
  updated_at: string;
}

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: 'pending' | 'succeeded' | 'failed';
  response_status: number | null;
  error: string | null;
  duration_ms: number | null;
  created_at: string;
  attempted_at: string | null;
  next_attempt_at: string | null;
}
