-- Control-plane reads from memory (issue 45, docs/architecture.md "Reads from memory"): every api process keeps
-- products, meters, plans, coupons, tax rates and customers it has read in a per-process cache
-- (shared/read-cache.ts) and polls these versions; triggers bump a kind's version in the transaction of every
-- change to its tables, so a poll that sees the new version runs after the change committed and the cache it
-- clears refills with it. One row per kind: writers of one kind never wait on another kind's row. A new row of a
-- kind's own table is no change to anything cached (a cache keeps no "not found"), so INSERT bumps only where a
-- row adds to an answer that exists already (a plan's new version, a customer's address): creating customers,
-- products or meters in parallel never queues on the version row.
-- Expands only: a new table, a new function, new triggers.
CREATE TABLE read_cache_versions (
  kind    text PRIMARY KEY,
  version bigint NOT NULL DEFAULT 0
);
INSERT INTO read_cache_versions (kind) VALUES
  ('products'), ('meters'), ('plans'), ('coupons'), ('tax_rates'), ('customers');

CREATE FUNCTION bump_read_cache_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- An upsert: a kind's row missing for whatever reason comes back, and still moves.
  INSERT INTO read_cache_versions AS v (kind, version) VALUES (TG_ARGV[0], 1)
    ON CONFLICT (kind) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER products_read_cache AFTER UPDATE OR DELETE OR TRUNCATE ON products
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_read_cache_version('products');
CREATE TRIGGER meters_read_cache AFTER UPDATE OR DELETE OR TRUNCATE ON meters
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_read_cache_version('meters');
CREATE TRIGGER plans_read_cache AFTER UPDATE OR DELETE OR TRUNCATE ON plans
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_read_cache_version('plans');
CREATE TRIGGER plan_versions_read_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plan_versions
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_read_cache_version('plans');
CREATE TRIGGER coupons_read_cache AFTER UPDATE OR DELETE OR TRUNCATE ON coupons
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_read_cache_version('coupons');
CREATE TRIGGER tax_rates_read_cache AFTER UPDATE OR DELETE OR TRUNCATE ON tax_rates
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_read_cache_version('tax_rates');
CREATE TRIGGER accounts_read_cache AFTER UPDATE OR DELETE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_read_cache_version('customers');
CREATE TRIGGER billing_addresses_read_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON billing_addresses
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_read_cache_version('customers');
