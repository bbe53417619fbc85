-- Invoice numbers (issue 30): one series for the deployment (the seller, SELLER_NAME, numbers its invoices),
-- taken from a sequence when the period close inserts the invoice — in the same transaction, so a close re-run
-- after a crash finds the invoice numbered already. A rolled-back close leaves a gap in the series, never a
-- duplicate. Existing invoices are numbered in the order they were created.
CREATE SEQUENCE invoice_number_seq AS bigint;
ALTER TABLE invoices ADD COLUMN number bigint;
UPDATE invoices SET number = n.seq
  FROM (SELECT id, nextval('invoice_number_seq') AS seq FROM (SELECT id FROM invoices ORDER BY created_at, id) o) n
 WHERE invoices.id = n.id;
ALTER TABLE invoices ALTER COLUMN number SET DEFAULT nextval('invoice_number_seq');
-- No NOT NULL (docs/upgrades.md: a migration only expands): the default numbers every insert, the previous
-- release's too; the constraint is a contract step for a later release.
ALTER SEQUENCE invoice_number_seq OWNED BY invoices.number;
CREATE UNIQUE INDEX invoices_number ON invoices (number);
