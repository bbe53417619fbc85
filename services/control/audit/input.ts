import type { RequestContext } from '../../../shared/http/context.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { ValidationError } from '../../../shared/errors.js';
import { ListAuditEventsQuery, type AuditEventListRequest } from '../../../shared/api/audit.js';

/** The audit log's one validation place. */
const listQuery = queryValidator<ListAuditEventsQuery>(ListAuditEventsQuery);

export function parseListAuditEvents(ctx: RequestContext): AuditEventListRequest {
  const q = listQuery.parseQuery(ctx.query);
  const from = q.from === undefined ? undefined : new Date(q.from);
  const to = q.to === undefined ? undefined : new Date(q.to);
  if (from && to && from.getTime() > to.getTime())
    throw new ValidationError([{ field: 'to', message: 'must not be before from' }]);
  return {
    page: q.page,
    per_page: q.per_page,
    ...(q.resource !== undefined ? { resource: q.resource } : {}),
    ...(q.resource_type !== undefined ? { resourceType: q.resource_type } : {}),
    ...(q.actor !== undefined ? { actor: q.actor } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
  };
}
