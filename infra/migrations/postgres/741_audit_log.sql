-- The audit log (issue 47, docs/audit.md): every change an API request or a CLI command makes to a business row,
-- written by a trigger in the same transaction as the change. Who acted comes from the connection's
-- `meterline.audit_actor` setting (JSON), which the Postgres pool sets from the request's or command's audit
-- context (shared/audit/actor.ts); a change made outside one (the billing run, the dispatcher) has no actor and
-- is not logged here.
CREATE TABLE audit_events (
  seq              bigserial PRIMARY KEY,
  id               text NOT NULL UNIQUE DEFAULT 'aud_' || replace(gen_random_uuid()::text, '-', ''),
  occurred_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  resource_type    text NOT NULL,                                 -- product, invoice, user …
  resource_id      text NOT NULL,                                 -- its id (composite keys joined by ':')
  action           text NOT NULL CHECK (action IN ('create', 'update', 'delete')),
  actor_type       text NOT NULL CHECK (actor_type IN ('token', 'cli', 'public')),
  actor_account_id text,                                          -- the token's account
  actor_user_id    text,
  actor_client_id  text,
  actor_token_id   text,                                          -- the access token's jti
  actor_role       text,
  actor_address    text,                                          -- the client's IP address
  actor_name       text,                                          -- CLI: the OS user and host
  request_id       text,                                          -- X-Request-Id of the request
  operation        text,                                          -- 'PATCH /v1/products/:product_id', 'meterline clients create'
  before           jsonb,                                         -- the row before (secrets redacted); NULL for a create
  after            jsonb                                          -- the row after (secrets redacted); NULL for a delete
);
CREATE INDEX audit_events_time ON audit_events (occurred_at, seq);
CREATE INDEX audit_events_resource ON audit_events (resource_id, seq);
CREATE INDEX audit_events_resource_type ON audit_events (resource_type, seq);
CREATE INDEX audit_events_actor_user ON audit_events (actor_user_id, seq) WHERE actor_user_id IS NOT NULL;
CREATE INDEX audit_events_actor_client ON audit_events (actor_client_id, seq) WHERE actor_client_id IS NOT NULL;

-- Trigger arguments: resource type, key column(s) (comma-separated), then the columns to redact.
CREATE FUNCTION audit_row_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  raw text := current_setting('meterline.audit_actor', true);
  actor jsonb;
  old_row jsonb;
  new_row jsonb;
  row_key text;
  col text;
  i integer;
BEGIN
  IF raw IS NULL OR raw = '' THEN
    RETURN NULL;
  END IF;
  actor := raw::jsonb;
  IF TG_OP <> 'INSERT' THEN
    old_row := to_jsonb(OLD);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    new_row := to_jsonb(NEW);
  END IF;
  IF TG_OP = 'UPDATE' AND old_row = new_row THEN
    RETURN NULL;
  END IF;
  -- Numbers as their exact decimal text (money is NUMERIC: a JSON number would be read back as a float).
  SELECT jsonb_object_agg(key, CASE WHEN jsonb_typeof(value) = 'number' THEN to_jsonb(value #>> '{}') ELSE value END)
    INTO old_row FROM jsonb_each(old_row);
  SELECT jsonb_object_agg(key, CASE WHEN jsonb_typeof(value) = 'number' THEN to_jsonb(value #>> '{}') ELSE value END)
    INTO new_row FROM jsonb_each(new_row);
  SELECT string_agg(coalesce(new_row, old_row) ->> k, ':' ORDER BY n) INTO row_key
    FROM unnest(string_to_array(TG_ARGV[1], ',')) WITH ORDINALITY AS u(k, n);
  FOR i IN 2 .. TG_NARGS - 1 LOOP
    col := TG_ARGV[i];
    IF new_row IS NOT NULL AND new_row ->> col IS NOT NULL THEN
      new_row := jsonb_set(new_row, ARRAY[col], CASE
        WHEN old_row IS NOT NULL AND old_row -> col IS DISTINCT FROM new_row -> col THEN '"[redacted, changed]"'::jsonb
        ELSE '"[redacted]"'::jsonb END);
    END IF;
    IF old_row IS NOT NULL AND old_row ->> col IS NOT NULL THEN
      old_row := jsonb_set(old_row, ARRAY[col], '"[redacted]"'::jsonb);
    END IF;
  END LOOP;
  INSERT INTO audit_events (resource_type, resource_id, action, actor_type, actor_account_id, actor_user_id,
      actor_client_id, actor_token_id, actor_role, actor_address, actor_name, request_id, operation, before, after)
    VALUES (TG_ARGV[0], row_key,
      CASE TG_OP WHEN 'INSERT' THEN 'create' WHEN 'UPDATE' THEN 'update' ELSE 'delete' END,
      actor ->> 'type', actor ->> 'account_id', actor ->> 'user_id', actor ->> 'client_id', actor ->> 'token_id',
      actor ->> 'role', actor ->> 'address', actor ->> 'name', actor ->> 'request_id', actor ->> 'operation',
      old_row, new_row);
  RETURN NULL;
END
$$;

-- Append-only: no UPDATE, no TRUNCATE, and DELETE only by the retention purge, which sets
-- `meterline.audit_purge` for its own transaction (services/domain/audit/store.ts) and deletes only rows older
-- than the retention it names. A guard against any code path of the application, not against a database superuser.
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  keep_days text := current_setting('meterline.audit_purge', true);
BEGIN
  IF TG_OP = 'DELETE' AND keep_days IS NOT NULL AND keep_days <> ''
     AND OLD.occurred_at < now() - make_interval(days => keep_days::integer) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_events is append-only (% refused)', TG_OP USING ERRCODE = '42501';
END
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();

-- The audited tables: the business objects the API and the CLI change. Left out, by design (docs/audit.md): the
-- authorization server's protocol state (codes, grants, refresh and access tokens, sessions), queues and their
-- bookkeeping (outbox, webhook deliveries, invoice emails, idempotency keys, alert triggers, entitlement
-- exhaustions and table version, document numbers), the processors' mirrors (sandbox charges and refunds, Stripe
-- customers and events) and the log itself.
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON accounts FOR EACH ROW EXECUTE FUNCTION audit_row_change('account', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION audit_row_change('user', 'id', 'password_hash');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON oauth_clients FOR EACH ROW EXECUTE FUNCTION audit_row_change('client', 'id', 'secret_hash');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON signing_keys FOR EACH ROW EXECUTE FUNCTION audit_row_change('signing_key', 'kid', 'sealed_private_jwk');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON products FOR EACH ROW EXECUTE FUNCTION audit_row_change('product', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON meters FOR EACH ROW EXECUTE FUNCTION audit_row_change('meter', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON subscriptions FOR EACH ROW EXECUTE FUNCTION audit_row_change('subscription', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON subscription_items FOR EACH ROW EXECUTE FUNCTION audit_row_change('subscription_item', 'subscription_id,position');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON billing_addresses FOR EACH ROW EXECUTE FUNCTION audit_row_change('billing_address', 'account_id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON payment_methods FOR EACH ROW EXECUTE FUNCTION audit_row_change('payment_method', 'id', 'fingerprint', 'processor_token');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON webhooks FOR EACH ROW EXECUTE FUNCTION audit_row_change('webhook', 'id', 'secret_sealed', 'previous_secret_sealed');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON invoices FOR EACH ROW EXECUTE FUNCTION audit_row_change('invoice', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON invoice_lines FOR EACH ROW EXECUTE FUNCTION audit_row_change('invoice_line', 'invoice_id,position');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON payment_attempts FOR EACH ROW EXECUTE FUNCTION audit_row_change('payment_attempt', 'invoice_id,attempt');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON credit_grants FOR EACH ROW EXECUTE FUNCTION audit_row_change('credit', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON credit_applications FOR EACH ROW EXECUTE FUNCTION audit_row_change('credit_application', 'grant_id,invoice_id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON credit_notes FOR EACH ROW EXECUTE FUNCTION audit_row_change('credit_note', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON credit_note_lines FOR EACH ROW EXECUTE FUNCTION audit_row_change('credit_note_line', 'credit_note_id,position');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON usage_corrections FOR EACH ROW EXECUTE FUNCTION audit_row_change('usage_correction', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON test_clocks FOR EACH ROW EXECUTE FUNCTION audit_row_change('test_clock', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON tax_rates FOR EACH ROW EXECUTE FUNCTION audit_row_change('tax_rate', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON entitlements FOR EACH ROW EXECUTE FUNCTION audit_row_change('entitlement', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON entitlement_grants FOR EACH ROW EXECUTE FUNCTION audit_row_change('entitlement_grant', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON alerts FOR EACH ROW EXECUTE FUNCTION audit_row_change('alert', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON plans FOR EACH ROW EXECUTE FUNCTION audit_row_change('plan', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON plan_versions FOR EACH ROW EXECUTE FUNCTION audit_row_change('plan_version', 'plan_id,version');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON coupons FOR EACH ROW EXECUTE FUNCTION audit_row_change('coupon', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON coupon_redemptions FOR EACH ROW EXECUTE FUNCTION audit_row_change('coupon_redemption', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON portal_settings FOR EACH ROW EXECUTE FUNCTION audit_row_change('portal_settings', 'id');
