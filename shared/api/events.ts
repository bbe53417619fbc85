import Type from 'typebox';
import { PaginationQuery, listOf, type PageRequest } from '../http/pagination.js';
import { EVENT_TYPES, type EventType } from '../vocabulary.js';

export const ListEventsQuery = Type.Object(
  { ...PaginationQuery, type: Type.Optional(Type.Enum([...EVENT_TYPES], { description: 'only events of this type' })) },
  { additionalProperties: false },
);
export type ListEventsQuery = Type.Static<typeof ListEventsQuery>;

/** A validated GET /v1/events query. */
export interface EventListRequest extends PageRequest {
  type?: EventType;
}

/** The delivered payload's shape (docs/design.md §9). */
export const EventSchema = Type.Object(
  {
    id: Type.String({ description: 'evt_…; the X-Webhook-Id / webhook-id of its deliveries' }),
    type: Type.Enum([...EVENT_TYPES]),
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'depends on type (docs/webhooks.md, "Receiving webhooks")' },
    ),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const EventListSchema = listOf(EventSchema);
