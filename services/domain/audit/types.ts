/** An audit event as stored (infra/migrations/postgres/741_audit_log.sql). */
export interface AuditEventRow {
  id: string;
  occurred_at: Date;
  resource_type: string;
  resource_id: string;
  action: 'create' | 'update' | 'delete';
  actor_type: 'token' | 'cli' | 'public';
  actor_account_id: string | null;
  actor_user_id: string | null;
  actor_client_id: string | null;
  actor_token_id: string | null;
  actor_role: string | null;
  actor_address: string | null;
  actor_name: string | null;
  request_id: string | null;
  operation: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** Exact filters of a listing; absent ones match everything. */
export interface AuditFilter {
  resourceId?: string;
  resourceType?: string;
  /** A user, client or access token id. */
  actor?: string;
  from?: Date;
  to?: Date;
}
