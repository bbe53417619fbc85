-- Wakes the outbox relay as soon as events commit (NOTIFY is delivered at commit, never for a rolled-back
-- transaction); the relay still polls about once a second in case a notification is missed.
CREATE FUNCTION outbox_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('outbox_events', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_notify();
