import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { parseConfig, ConfigError } from '../../shared/config.js';

const base = {
  DATABASE_URL: 'postgres://u@127.0.0.1:55432/db',
  NATS_URL: 'nats://127.0.0.1:54222',
  CLICKHOUSE_URL: 'http://127.0.0.1:58123',
  SECRET_KEY: 'ab'.repeat(32),
};

t.test('defaults follow docs/design.md §4', async (t) => {
  const c = parseConfig(base);
  t.equal(c.HOST, '127.0.0.1');
  t.equal(c.PORT, 8080);
  t.equal(c.PUBLIC_BASE_URL, 'http://127.0.0.1:8080');
  t.equal(c.ACCESS_TOKEN_TTL_SECONDS, 3600);
  t.equal(c.WEBHOOKS_ALLOW_PRIVATE_URLS, false);
  t.equal(c.API_ROUTES, 'all');
  t.ok(Object.isFrozen(c), 'config is parsed once and frozen');
});

t.test('PUBLIC_BASE_URL derives from HOST and PORT unless given, without a trailing slash', async (t) => {
  t.equal(parseConfig({ ...base, HOST: '0.0.0.0', PORT: '9000' }).PUBLIC_BASE_URL, 'http://0.0.0.0:9000');
  t.equal(
    parseConfig({ ...base, PUBLIC_BASE_URL: 'https://billing.example.com/' }).PUBLIC_BASE_URL,
    'https://billing.example.com',
  );
});

t.test('booleans accept the usual spellings', async (t) => {
  t.equal(parseConfig({ ...base, WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' }).WEBHOOKS_ALLOW_PRIVATE_URLS, true);
  t.equal(parseConfig({ ...base, WEBHOOKS_ALLOW_PRIVATE_URLS: '0' }).WEBHOOKS_ALLOW_PRIVATE_URLS, false);
});

function problems(env: Record<string, string>): Record<string, string> {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return Object.fromEntries(err.problems.map((p) => [p.variable, p.message]));
    throw err;
  }
  throw new Error('expected a ConfigError');
}

t.test('a bad value names the variable and what is allowed', async (t) => {
  t.match(problems({ ...base, PORT: 'eighty' }), { PORT: /integer from 0 to 65535.*"eighty"/ });
  t.match(problems({ ...base, PORT: '70000' }), { PORT: /from 0 to 65535, got 70000/ });
  t.match(problems({ ...base, ACCESS_TOKEN_TTL_SECONDS: '5' }), { ACCESS_TOKEN_TTL_SECONDS: /from 60 to 86400/ });
  t.match(problems({ ...base, WEBHOOKS_ALLOW_PRIVATE_URLS: 'maybe' }), {
    WEBHOOKS_ALLOW_PRIVATE_URLS: /true or false/,
  });
  t.match(problems({ ...base, DATABASE_URL: 'mysql://x' }), { DATABASE_URL: /postgres:\/\/ or postgresql:\/\// });
  t.match(problems({ ...base, NATS_URL: 'not a url' }), { NATS_URL: /must be a URL/ });
  t.match(problems({ ...base, API_ROUTES: 'everything' }), { API_ROUTES: /one of all, ingress, control/ });
  t.match(problems({ ...base, PUBLIC_BASE_URL: 'ftp://x' }), { PUBLIC_BASE_URL: /http:\/\/ or https:\/\// });
  t.match(problems({ ...base, SECRET_KEY: 'abcd' }), { SECRET_KEY: /at least 32 random bytes.*got 2/ });
});

t.test('the settle interval: 1 s unless set, 100 ms to 60 s (docs/usage.md)', async (t) => {
  t.equal(parseConfig(base).USAGE_SETTLE_INTERVAL_MS, 1_000);
  t.equal(parseConfig({ ...base, USAGE_SETTLE_INTERVAL_MS: '250' }).USAGE_SETTLE_INTERVAL_MS, 250);
  t.match(problems({ ...base, USAGE_SETTLE_INTERVAL_MS: '50' }), { USAGE_SETTLE_INTERVAL_MS: /from 100 to 60000/ });
  t.match(problems({ ...base, USAGE_SETTLE_INTERVAL_MS: '1.5' }), { USAGE_SETTLE_INTERVAL_MS: /integer/ });
});

t.test('every problem is reported at once, required variables included', async (t) => {
  const p = problems({ PORT: '-1' });
  t.same(Object.keys(p).sort(), ['CLICKHOUSE_URL', 'DATABASE_URL', 'NATS_URL', 'PORT', 'SECRET_KEY']);
  t.match(p.DATABASE_URL, /is required/);
  t.throws(() => parseConfig({ PORT: '-1' }), /PORT: must be an integer/);
});

t.test('request body limits: a per-caller share of the budget and a read deadline (docs/limits.md)', async (t) => {
  const c = parseConfig(base);
  t.equal(c.BODY_READ_TIMEOUT_SECONDS, 10);
  t.equal(c.MAX_BUFFERED_REQUEST_BYTES_PER_CALLER, c.MAX_BUFFERED_REQUEST_BYTES / 8, 'an eighth of the budget');
  t.equal(
    parseConfig({ ...base, MAX_BUFFERED_REQUEST_BYTES: String(64 * 1024 * 1024) })
      .MAX_BUFFERED_REQUEST_BYTES_PER_CALLER,
    8 * 1024 * 1024,
    'the default follows the budget',
  );
  t.equal(
    parseConfig({ ...base, MAX_BUFFERED_REQUEST_BYTES: String(2 * 1024 * 1024) }).MAX_BUFFERED_REQUEST_BYTES_PER_CALLER,
    1024 * 1024,
    'never below one largest body (1 MiB)',
  );
  t.match(problems({ ...base, BODY_READ_TIMEOUT_SECONDS: '0' }), { BODY_READ_TIMEOUT_SECONDS: /from 1 to 600/ });
  t.match(problems({ ...base, MAX_BUFFERED_REQUEST_BYTES_PER_CALLER: '1000' }), {
    MAX_BUFFERED_REQUEST_BYTES_PER_CALLER: /from 1048576/,
  });
  t.match(
    problems({
      ...base,
      MAX_BUFFERED_REQUEST_BYTES: String(8 * 1024 * 1024),
      MAX_BUFFERED_REQUEST_BYTES_PER_CALLER: String(16 * 1024 * 1024),
    }),
    { MAX_BUFFERED_REQUEST_BYTES_PER_CALLER: /must not exceed MAX_BUFFERED_REQUEST_BYTES \(8388608\)/ },
  );
});

t.test('seller details for invoice PDFs: optional, the address on several lines, no control characters', async (t) => {
  const none = parseConfig(base);
  t.same([none.SELLER_NAME, none.SELLER_ADDRESS, none.SELLER_TAX_ID, none.INVOICE_FOOTER], ['', '', '', '']);
  const c = parseConfig({
    ...base,
    SELLER_NAME: '  Meterline Ltd ',
    SELLER_ADDRESS: '1 Market Street\\nSan Francisco, CA 94105\r\nUSA',
    SELLER_TAX_ID: 'EIN 12-3456789',
    INVOICE_FOOTER: 'Payment due within 30 days.',
  });
  t.equal(c.SELLER_NAME, 'Meterline Ltd');
  t.equal(
    c.SELLER_ADDRESS,
    '1 Market Street\nSan Francisco, CA 94105\nUSA',
    '\\n written in an env file is a line break',
  );
  t.match(problems({ ...base, SELLER_NAME: 'two\nlines' }), { SELLER_NAME: /must be one line/ });
  t.match(problems({ ...base, SELLER_ADDRESS: 'bell\u0007' }), { SELLER_ADDRESS: /control characters/ });
  t.match(problems({ ...base, SELLER_TAX_ID: 'x'.repeat(65) }), { SELLER_TAX_ID: /at most 64 characters, got 65/ });
});

t.test(
  'the payment processor: sandbox by default; Stripe needs its keys, from a value or a secret file, never echoed',
  async (t) => {
    t.equal(parseConfig(base).PAYMENT_PROCESSOR, 'sandbox');
    const err = (env: Record<string, string>) => {
      try {
        parseConfig({ ...base, ...env });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    };
    t.same(
      err({ PAYMENT_PROCESSOR: 'stripe' }).problems.map((p) => p.variable),
      ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'],
    );
    const leaked = err({
      PAYMENT_PROCESSOR: 'stripe',
      STRIPE_SECRET_KEY: 'pk_live_SECRETVALUE',
      STRIPE_WEBHOOK_SECRET: 'whsec_x',
    });
    t.same(
      leaked.problems.map((p) => p.variable),
      ['STRIPE_SECRET_KEY'],
    );
    t.notMatch(leaked.message, /SECRETVALUE/, 'a bad key is not shown');
    const dir = mkdtempSync(path.join(tmpdir(), 'meterline-config-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'key'), 'sk_test_fromfile\n');
    const c = parseConfig({
      ...base,
      PAYMENT_PROCESSOR: 'stripe',
      STRIPE_SECRET_KEY_FILE: path.join(dir, 'key'),
      STRIPE_WEBHOOK_SECRET: 'whsec_abc',
    });
    t.equal(c.STRIPE_SECRET_KEY_FILE, 'sk_test_fromfile', 'the file is read, trimmed');
    t.match(err({ STRIPE_SECRET_KEY_FILE: path.join(dir, 'missing') }).message, /STRIPE_SECRET_KEY_FILE: cannot read/);
  },
);
