-- Gapless document numbers (issue 31, docs/design.md §8 Invoice): every finalized invoice and every credit note
-- takes the next number of ONE series per deployment. A sequence (525_invoice_numbers.sql) skips the numbers of
-- rolled-back transactions; this counter row does not: a transaction takes its numbers with
-- `UPDATE document_numbers SET last = last + n RETURNING last`, which holds the row lock until it commits, so a
-- rollback (or a kill -9) gives its numbers back and the next transaction takes the same ones. Takers lock the
-- counter last in their transaction, after their own rows, so they wait on it only for the commit.
CREATE TABLE document_numbers (
  series text PRIMARY KEY CHECK (series = 'documents'),
  last   bigint NOT NULL CHECK (last >= 0)
);

-- Credit notes join the series. Existing notes are numbered after the existing invoices, oldest first.
ALTER TABLE credit_notes ADD COLUMN number bigint;
-- The prefix printed before the number (INVOICE_NUMBER_PREFIX with {YYYY} resolved when the number was taken),
-- kept so that a later change of the setting never renumbers a document already issued.
ALTER TABLE credit_notes ADD COLUMN number_prefix text;
ALTER TABLE invoices ADD COLUMN number_prefix text;

INSERT INTO document_numbers (series, last) SELECT 'documents', COALESCE(max(number), 0) FROM invoices;
UPDATE credit_notes SET number = n.seq
  FROM (SELECT id, (SELECT last FROM document_numbers) + row_number() OVER (ORDER BY created_at, id) AS seq
          FROM credit_notes) n
 WHERE credit_notes.id = n.id;
UPDATE document_numbers SET last = last + (SELECT count(*) FROM credit_notes);
CREATE UNIQUE INDEX credit_notes_number ON credit_notes (number);

-- The release before this one leaves `number` out of its INSERTs: its defaults now take from the counter too,
-- so a close or a credit note of either release during the roll stays in the one gapless series. This
-- release names the column (NULL for a draft) and numbers what it commits itself.
CREATE FUNCTION next_document_number() RETURNS bigint LANGUAGE sql VOLATILE AS
  $$ UPDATE document_numbers SET last = last + 1 WHERE series = 'documents' RETURNING last $$;
ALTER TABLE invoices ALTER COLUMN number SET DEFAULT next_document_number();
ALTER TABLE credit_notes ALTER COLUMN number SET DEFAULT next_document_number();
