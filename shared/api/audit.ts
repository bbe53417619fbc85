import Type from 'typebox';
import { PaginationQuery, listOf, type PageRequest } from '../http/pagination.js';

const Instant = (description: string) => Type.String({ format: 'date-time', description });

export const ListAuditEventsQuery = Type.Object(
  {
    ...PaginationQuery,
    resource: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'only changes of this resource id (`prod_…`, `usr_…`)',
      }),
    ),
    resource_type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'only changes of this resource type (`product`, `user`)',
      }),
    ),
    actor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'only changes by this user, client or access token id (`usr_…`, `cli_…`, a token id)',
      }),
    ),
    from: Type.Optional(Instant('only changes at or after this instant')),
    to: Type.Optional(Instant('only changes before this instant')),
  },
  { additionalProperties: false },
);
export type ListAuditEventsQuery = Type.Static<typeof ListAuditEventsQuery>;

/** A validated GET /v1/audit_events query. */
export interface AuditEventListRequest extends PageRequest {
  resource?: string;
  resourceType?: string;
  actor?: string;
  from?: Date;
  to?: Date;
}

const Text = Type.Union([Type.String(), Type.Null()]);

export const AuditEventSchema = Type.Object(
  {
    id: Type.String({ description: 'aud_…' }),
    occurred_at: Type.String({ format: 'date-time' }),
    resource_type: Type.String({ description: 'product, invoice, user, webhook …' }),
    resource_id: Type.String({ description: 'the changed row (composite keys joined by ":")' }),
    action: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')]),
    actor: Type.Object(
      {
        type: Type.Union([Type.Literal('token'), Type.Literal('cli'), Type.Literal('public')]),
        account_id: Text,
        user_id: Text,
        client_id: Text,
        token_id: Text,
        role: Text,
        address: Type.Union([Type.String(), Type.Null()], { description: "the client's IP address" }),
        name: Type.Union([Type.String(), Type.Null()], { description: 'CLI: the OS user and host' }),
      },
      { additionalProperties: false },
    ),
    request_id: Text,
    operation: Type.Union([Type.String(), Type.Null()], {
      description: 'the route (`PATCH /v1/products/:product_id`) or CLI command (`meterline clients create`)',
    }),
    before: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description: 'the row before the change, secrets replaced by "[redacted]"; null for a create',
    }),
    after: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description:
        'the row after the change, secrets redacted ("[redacted, changed]" when it changed); null for a delete',
    }),
  },
  { additionalProperties: false },
);
export const AuditEventListSchema = listOf(AuditEventSchema);
