-- Operator roles (issue 47, docs/roles.md): what a user of the operator's account may do beside its token's
-- scopes. Every user that exists becomes an owner (what they could do until now); a customer's users keep the
-- default too, but a role only ever restricts operators (a customer's people are bounded by their scopes).
ALTER TABLE users ADD COLUMN role text NOT NULL DEFAULT 'owner'
  CHECK (role IN ('owner', 'admin', 'billing', 'support', 'developer'));
CREATE INDEX users_operator_owners ON users (account_id) WHERE is_operator AND role = 'owner';
