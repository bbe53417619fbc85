import type { OperatorUser } from '../../domain/accounts/roles.js';

export function toOperatorUser(u: OperatorUser) {
  return { id: u.id, email: u.email, role: u.role, created_at: u.created_at.toISOString() };
}
