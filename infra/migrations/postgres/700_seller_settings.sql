-- Seller and branding settings (issue 48, docs/seller-settings.md): who issues the deployment's invoices, credit
-- notes and emails — legal name, address, tax ids, support email, invoice footer, the emails' From address and a
-- logo. One row per deployment, like portal_settings: an admin acts for the deployment, and every customer
-- account is billed by it. `settings` holds only what the operator set (merged over the SELLER_*, INVOICE_FOOTER
-- and MAIL_FROM defaults by services/domain/seller/profile.ts); the logo is bytes beside it.
CREATE TABLE seller_settings (
  id              boolean PRIMARY KEY DEFAULT true CHECK (id),
  settings        jsonb NOT NULL DEFAULT '{}'::jsonb,
  logo            bytea,
  logo_media_type text CHECK (logo_media_type IN ('image/png', 'image/jpeg')),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((logo IS NULL) = (logo_media_type IS NULL))
);
