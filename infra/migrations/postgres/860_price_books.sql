-- Price books (issue 46 item 2, docs/plans.md "Price books", services/domain/pricing/price-books.ts): one product, plan
-- version or coupon priced in several currencies; a customer's currency chooses the book. Expand-only (docs/upgrades.md):
-- new columns whose defaults keep every existing row as it was (its currency is its only book).

-- A product's prices in other currencies than `currency`: {"EUR": {"price": "0.02"}} (flat, metered, package: the
-- price; package_size is the product's) or {"JPY": {"tiers": [...]}} (tiered: every currency its own tiers, the
-- product's tiers_mode). Keys are ISO 4217 codes other than `currency`; amounts exact decimal text.
ALTER TABLE products ADD COLUMN currency_options jsonb NOT NULL DEFAULT '{}';

-- An amount_off coupon's amounts in other currencies than `currency`: {"JPY": {"amount_off": "1000"}}.
ALTER TABLE coupons ADD COLUMN currency_options jsonb NOT NULL DEFAULT '{}';

-- The customer's currency: the book its subscriptions are priced from. Set explicitly, or fixed by its first
-- subscription; a customer with a subscription keeps it (a change is 409). NULL: not chosen yet.
ALTER TABLE accounts ADD COLUMN currency text CHECK (currency ~ '^[A-Z]{3}$');
-- Customers subscribed before this migration: their subscriptions' currency when they all share one (those with
-- subscriptions in several currencies keep NULL; the next subscription fixes it). No audit actor: not logged.
UPDATE accounts a SET currency = s.currency
  FROM (SELECT account_id, min(currency) AS currency FROM subscriptions GROUP BY account_id
         HAVING count(DISTINCT currency) = 1) s
 WHERE a.id = s.account_id;
