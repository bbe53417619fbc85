-- A customer's language (issue 46, services/domain/invoices/invoice-texts.ts, docs/billing.md "Languages"): the
-- fixed texts of its invoice PDFs, and amounts and dates formatted for it. Expand-only: a column with a default
-- every existing account takes (English, as before).
ALTER TABLE accounts ADD COLUMN locale text NOT NULL DEFAULT 'en' CHECK (locale IN ('en', 'de', 'fr', 'es', 'ja'));
