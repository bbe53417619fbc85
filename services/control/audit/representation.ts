import type { AuditEventRow } from '../../domain/audit/types.js';

/** An audit event as the API shows it. */
export function toAuditEvent(r: AuditEventRow) {
  return {
    id: r.id,
    occurred_at: r.occurred_at.toISOString(),
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    action: r.action,
    actor: {
      type: r.actor_type,
      account_id: r.actor_account_id,
      user_id: r.actor_user_id,
      client_id: r.actor_client_id,
      token_id: r.actor_token_id,
      role: r.actor_role,
      address: r.actor_address,
      name: r.actor_name,
    },
    request_id: r.request_id,
    operation: r.operation,
    before: r.before,
    after: r.after,
  };
}
