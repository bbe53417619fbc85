-- Revoking or rotating an invoice's hosted link and minting a card page link are acts of a user (docs/audit.md):
-- audited like every business object. The card link's token hash is redacted.
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON hosted_invoice_links FOR EACH ROW EXECUTE FUNCTION audit_row_change('hosted_invoice_link', 'invoice_id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON hosted_card_links FOR EACH ROW EXECUTE FUNCTION audit_row_change('hosted_card_link', 'id', 'token_hash');
