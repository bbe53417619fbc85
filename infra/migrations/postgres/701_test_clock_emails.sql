-- Emails of customers on a test clock (issue 48, docs/emails.md): sent too, so a simulated month shows the email a
-- customer will get, and marked as a test ("[Test]" in the subject, a note at the top). Whether the customer was on
-- a clock is decided when the event is fanned out, as the address is.
ALTER TABLE invoice_emails ADD COLUMN test boolean NOT NULL DEFAULT false;
