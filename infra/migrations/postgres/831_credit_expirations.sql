-- Expiring credit (issue 44 item 4, docs/credits.md "Expiry"): the billing run moves what remains of a grant at its
-- expires_at out of the balance — remaining set to 0 and this ledger row, in one transaction. The primary key makes
-- it once per grant, whichever run (or a rerun after a crash) gets there.
CREATE TABLE credit_expirations (
  grant_id   text PRIMARY KEY REFERENCES credit_grants(id) ON DELETE CASCADE,
  amount     numeric NOT NULL CHECK (amount > 0),           -- the remainder at the expiry
  expired_at timestamptz NOT NULL                            -- the grant's expires_at
);
-- The grants the expiry step looks for: a remainder left past their expiry.
CREATE INDEX credit_grants_expiring ON credit_grants (expires_at) WHERE remaining > 0 AND expires_at IS NOT NULL;
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON credit_expirations FOR EACH ROW EXECUTE FUNCTION audit_row_change('credit_expiration', 'grant_id');
