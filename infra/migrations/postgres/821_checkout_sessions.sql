-- Checkout sessions (issue 44 item 2, docs/checkout.md): an operator's link to a hosted page where a customer picks up
-- a plan, gives a card and subscribes. Grants: the owner's default privileges (infra/stack/postgres.ts). Expands only.

-- account_id: the customer named at creation, or the one created from customer_email when the page first sets up a
-- card (under this row's lock: two tabs make one customer). Completion locks the row, subscribes once and records the
-- subscription here: UNIQUE (subscription_id) and status 'complete' make a double submit find it done. 'expired' is
-- not stored: an open session past expires_at is expired.
CREATE TABLE checkout_sessions (
  id                    text PRIMARY KEY,                                    -- cs_…
  plan_id               text NOT NULL REFERENCES plans (id),
  plan_version          integer,                                             -- null: the latest at completion
  account_id            text REFERENCES accounts (id),
  customer_email        text,
  success_url           text NOT NULL,
  cancel_url            text NOT NULL,
  trial_days            integer CHECK (trial_days >= 0),
  coupon_id             text REFERENCES coupons (id),
  allow_promotion_codes boolean NOT NULL DEFAULT false,
  status                text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'complete')),
  subscription_id       text UNIQUE REFERENCES subscriptions (id),
  promotion_code_id     text REFERENCES promotion_codes (id),
  expires_at            timestamptz NOT NULL,
  completed_at          timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  CHECK (account_id IS NOT NULL OR customer_email IS NOT NULL),
  CHECK (NOT (coupon_id IS NOT NULL AND allow_promotion_codes)),
  CHECK ((status = 'complete') = (subscription_id IS NOT NULL)),
  CHECK ((status = 'complete') = (completed_at IS NOT NULL))
);
CREATE INDEX checkout_sessions_of_account ON checkout_sessions (account_id) WHERE account_id IS NOT NULL;

CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON checkout_sessions FOR EACH ROW EXECUTE FUNCTION audit_row_change('checkout_session', 'id');
