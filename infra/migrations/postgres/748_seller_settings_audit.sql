-- The seller settings (700) are the operator's doing: audited like portal_settings (docs/audit.md). The logo's
-- bytes are not copied into the log (up to 256 KiB each time); the log says whether it changed.
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON seller_settings FOR EACH ROW EXECUTE FUNCTION audit_row_change('seller_settings', 'id', 'logo');
