/**
 * One validated configuration, parsed once at start-up from the environment.
 * A bad value stops start-up with a message naming the variable and what it allows.
 */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super('invalid configuration:\n' + problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

import {
  int,
  bool,
  url,
  urlList,
  oneOf,
  host,
  name,
  optionalName,
  secretKey,
  numberPrefix,
  mailAddress,
  allowing,
  type VarSpec,
} from './config-parsers.js';
import { PAYMENT_SPEC, paymentCrossChecks, type PaymentConfig } from './config-payments.js';
import { EXPORT_SPEC, type ExportConfig } from './config-exports.js';
import { SELLER_SPEC, type SellerConfig } from './config-seller.js';
import { SSO_SPEC, ssoCrossChecks, type SsoConfig } from './config-sso.js';
import { PORTAL_SPEC, type PortalConfig } from './config-portal.js';
import { ENTITLEMENTS_SPEC, type EntitlementsConfig } from './config-entitlements.js';
import { USAGE_SPEC, type UsageConfig } from './config-usage.js';
import { NO_TRUSTED_PROXIES, parseTrustedProxies, type TrustedProxies } from './http/client-address.js';
import { parseThresholdMinimums, type ThresholdMinimums } from './money/threshold-minimums.js';

type Env = Record<string, string | undefined>;

export const API_ROUTE_SETS = ['all', 'ingress', 'control'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface Config
  extends PaymentConfig,
    ExportConfig,
    SellerConfig,
    SsoConfig,
    PortalConfig,
    EntitlementsConfig,
    UsageConfig {
  HOST: string;
  PORT: number;
  PUBLIC_BASE_URL: string;
  DATABASE_URL: string;
  /** One NATS server, or every server of a NATS cluster (comma-separated). */
  NATS_URL: string;
  /** Replicas of each JetStream stream and KV bucket: 1 on one server, 3 on a NATS cluster. */
  NATS_STREAM_REPLICAS: number;
  /** One ClickHouse server, or every replica of every shard of CLICKHOUSE_CLUSTER (comma-separated). */
  CLICKHOUSE_URL: string;
  /**
   * The ClickHouse cluster (its `remote_servers` name): migrations run on each host (shared/migrate-cluster.ts) and
   * create replicated local tables plus Distributed tables under today's names; empty = one server, plain tables.
   */
  CLICKHOUSE_CLUSTER: string;
  /** ClickHouse database holding usage; tests use one per test file. */
  CLICKHOUSE_DATABASE: string;
  /** Prefix for NATS stream, subject and bucket names; empty in production, unique per test file. */
  NATS_NAMESPACE: string;
  ACCESS_TOKEN_TTL_SECONDS: number;
  WEBHOOKS_ALLOW_PRIVATE_URLS: boolean;
  /** Which routes an api process mounts: an operator may split ingress and control plane. */
  API_ROUTES: (typeof API_ROUTE_SETS)[number];
  LOG_LEVEL: (typeof LOG_LEVELS)[number];
  /** Bytes the USAGE stream may hold before publishes are refused (discard: new → 503). */
  USAGE_STREAM_MAX_BYTES: number;
  /** Unacknowledged frames per usage WebSocket before the server stops reading it (docs/design.md §8). */
  USAGE_STREAM_MAX_INFLIGHT: number;
  /** Alerts one customer (or the deployment's every-customer alerts) may have (docs/alerts.md). */
  ALERTS_MAX_PER_ACCOUNT: number;
  /** Audit events older than this many days are deleted by the api's daily purge (docs/audit.md). */
  AUDIT_RETENTION_DAYS: number;
  /**
   * 32+ random bytes (hex or base64) keying what must not be stored in clear: signing keys at rest,
   * card fingerprints, CSRF tokens. `meterline up` and `npm test` create one under .data/ when unset.
   */
  SECRET_KEY: Buffer;
  /** A period closes (is invoiced) this long after its end, so late usage of the period still counts. */
  BILLING_GRACE_SECONDS: number;
  /** Printed before every invoice and credit note number; {YYYY} is the UTC year the number is taken. */
  INVOICE_NUMBER_PREFIX: string;
  /** A period's invoice is a draft from the period's end until BILLING_GRACE_SECONDS later. */
  BILLING_DRAFTS: boolean;
  /** How often the billing role looks for periods to close and payment attempts due. */
  BILLING_INTERVAL_SECONDS: number;
  /** How often the billing role checks the billing thresholds of running periods (progressive billing). */
  BILLING_THRESHOLD_INTERVAL_SECONDS: number;
  /** Threshold sanity (issue 49): the smallest billing_threshold per currency (default 1 of its major unit). */
  BILLING_THRESHOLD_MINIMUMS: ThresholdMinimums;
  /** Threshold sanity (issue 49): at most one threshold invoice per subscription within this many seconds. */
  BILLING_THRESHOLD_INVOICE_SPACING_SECONDS: number;
  /** log2 of scrypt's cost N for new password hashes (17 = OWASP's 2^17); tests lower it for speed. */
  PASSWORD_SCRYPT_LOG2_N: number;
  /** Per-account defaults; `meterline accounts limits` overrides them per account. */
  LIMIT_INGEST_RECORDS_PER_SECOND: number;
  LIMIT_ATTRIBUTED_RECORDS_PER_SECOND: number;
  LIMIT_REQUESTS_PER_SECOND: number;
  LIMIT_MAX_METERS: number;
  LIMIT_MAX_WEBHOOKS: number;
  LIMIT_MAX_PAYMENT_METHODS: number;
  /** Sign-in backoff: the first wait once the free failures are used up (it doubles per failure). */
  SIGN_IN_BACKOFF_BASE_SECONDS: number;
  /**
   * Load balancers whose X-Forwarded-For names the client (shared/http/client-address.ts): the sign-in
   * throttle and the per-address body budget key on the client's address, never on the proxy's.
   */
  TRUSTED_PROXIES: TrustedProxies;
  /** Request body bytes buffered at once across all requests of the process; past it → 503 overloaded. */
  MAX_BUFFERED_REQUEST_BYTES: number;
  /**
   * How much of MAX_BUFFERED_REQUEST_BYTES one caller may hold (an account; a client address on the public
   * routes): past it that caller's requests get 503 overloaded while everyone else's are read (docs/limits.md).
   */
  MAX_BUFFERED_REQUEST_BYTES_PER_CALLER: number;
  /** A request body not complete this long after its request arrived is answered 408 and released. */
  BODY_READ_TIMEOUT_SECONDS: number;
  /** How long stop() waits for in-flight requests before closing connections and pools. */
  SHUTDOWN_DRAIN_SECONDS: number;
  /** ClickHouse max_execution_time of usage reads. */
  USAGE_QUERY_MAX_EXECUTION_SECONDS: number;
  /** Usage reads running at once per account (per process), and how many more may wait. */
  USAGE_QUERIES_PER_ACCOUNT: number;
  USAGE_QUERY_QUEUE_PER_ACCOUNT: number;
  /** How long the revocation list and meter registry may go unconfirmed before tokens/ingest get 503. */
  WATCH_MAX_STALENESS_SECONDS: number;
  /** Interface and port of the consumer, dispatcher and billing roles' `/metrics` (the api serves it on PORT). */
  METRICS_HOST: string;
  /** 0 = a free port chosen at start (reported to `meterline up`, listed by `stack status`). */
  METRICS_PORT: number;
  /** Where invoice emails go out (docs/emails.md); empty: no emails are sent. */
  SMTP_URL: string;
  /** The From of invoice emails. */
  MAIL_FROM: string;
}

const SPEC: { [K in keyof Config]: VarSpec<Config[K], Config> } = {
  HOST: { parse: host, default: '127.0.0.1', describe: 'interface the api listens on' },
  PORT: { parse: int(0, 65535), default: 8080, describe: 'port the api listens on (0 = any free port)' },
  PUBLIC_BASE_URL: {
    parse: url(['http', 'https']),
    default: (c) => `http://${c.HOST ?? '127.0.0.1'}:${c.PORT ?? 8080}`,
    shownDefault: '`http://HOST:PORT`',
    describe: 'external base URL; the OAuth issuer',
  },
  DATABASE_URL: {
    parse: url(['postgres', 'postgresql']),
    describe: "Postgres connection URL (`meterline up` and `npm test` pass the local stack's)",
  },
  NATS_URL: {
    parse: urlList(['nats', 'tls']),
    describe: "NATS server URL (JetStream enabled), or a comma-separated list of a cluster's servers",
  },
  NATS_STREAM_REPLICAS: {
    parse: int(1, 5),
    default: 1,
    describe: 'replicas of each JetStream stream and KV bucket (3 on a NATS cluster)',
  },
  CLICKHOUSE_URL: {
    parse: urlList(['http', 'https']),
    describe: 'ClickHouse HTTP URL, or a comma-separated list of every replica of a cluster',
  },
  CLICKHOUSE_CLUSTER: {
    parse: optionalName,
    default: '',
    shownDefault: 'empty',
    describe:
      'ClickHouse cluster name (`remote_servers`): replicated local tables + Distributed tables, writes sharded by account',
  },
  CLICKHOUSE_DATABASE: { parse: name, default: 'meterline', describe: 'ClickHouse database for usage' },
  NATS_NAMESPACE: {
    parse: optionalName,
    default: '',
    shownDefault: 'empty',
    describe: 'prefix of NATS stream, subject and bucket names (tests use one per file)',
  },
  ACCESS_TOKEN_TTL_SECONDS: { parse: int(60, 86_400), default: 3600, describe: 'access token lifetime' },
  WEBHOOKS_ALLOW_PRIVATE_URLS: {
    parse: bool,
    default: false,
    describe: 'allow `http://` and private/loopback webhook targets (development, tests)',
  },
  API_ROUTES: {
    parse: oneOf(API_ROUTE_SETS),
    default: 'all',
    describe: 'routes the api mounts: `ingress` or `control` splits the api behind a path-routing load balancer',
  },
  LOG_LEVEL: { parse: oneOf(LOG_LEVELS), default: 'info', describe: 'log level (pino)' },
  USAGE_STREAM_MAX_BYTES: {
    parse: int(1 << 20, Number.MAX_SAFE_INTEGER),
    default: 4 * 1024 ** 3,
    shownDefault: '4 GiB',
    describe: 'byte cap of the USAGE stream (`discard: new`: overload becomes 503, never loss)',
  },
  USAGE_STREAM_MAX_INFLIGHT: {
    parse: int(1, 10_000),
    default: 64,
    describe: 'unanswered frames per usage WebSocket before the server takes no more from it',
  },
  ALERTS_MAX_PER_ACCOUNT: {
    parse: int(1, 100_000),
    default: 100,
    describe: 'alerts per customer (and of the deployment-wide ones): one more → 409 `alert_limit_reached`',
  },
  AUDIT_RETENTION_DAYS: {
    parse: int(1, 36_500),
    default: 365,
    describe: 'days an audit event is kept; older ones are deleted by the api once an hour (docs/audit.md)',
  },
  ...USAGE_SPEC,
  SECRET_KEY: {
    parse: secretKey,
    shownDefault: 'made under `.data/`',
    describe:
      'at least 32 random bytes keying signing keys at rest, card fingerprints, CSRF tokens; `meterline up` and `npm test` create one when unset',
  },
  BILLING_GRACE_SECONDS: {
    parse: int(0, 35 * 86_400),
    default: 3600,
    describe: 'a period is invoiced this long after it ends, so late usage of the period still counts',
  },
  INVOICE_NUMBER_PREFIX: {
    parse: numberPrefix,
    default: 'ML-{YYYY}-',
    describe:
      'printed before the number of every invoice and credit note (one gapless series per deployment): `ML-{YYYY}-` → `ML-2026-000123`; `{YYYY}` is the year the number is given',
  },
  BILLING_DRAFTS: {
    parse: bool,
    default: true,
    describe:
      'true: a period’s invoice is written as a draft when the period ends (late usage, one-off lines, early finalize) and finalized after BILLING_GRACE_SECONDS; false: nothing is written during the grace period, the invoice is written finalized once it is over',
  },
  BILLING_INTERVAL_SECONDS: {
    parse: int(1, 86_400),
    default: 60,
    describe: 'how often the billing role runs (period closes, payment retries)',
  },
  BILLING_THRESHOLD_INTERVAL_SECONDS: {
    parse: int(1, 3_600),
    default: 5,
    describe:
      'how often the billing role checks subscriptions with a billing_threshold: a threshold invoice is issued and charged this long at most after the amount due reaches it',
  },
  BILLING_THRESHOLD_MINIMUMS: {
    parse: allowing('comma-separated `CURRENCY:AMOUNT`', (raw) => parseThresholdMinimums(raw)),
    default: Object.freeze({}),
    shownDefault: 'empty (1 of each currency’s major unit)',
    describe:
      'smallest billing_threshold per currency (`USD:5,JPY:500`); a currency not listed: 1 of its major unit (1.00 USD, 1 JPY); below it → 422',
  },
  BILLING_THRESHOLD_INVOICE_SPACING_SECONDS: {
    parse: int(0, 31 * 86_400),
    default: 3600,
    describe:
      'at most one threshold invoice per subscription within this many seconds (the amount due past the threshold waits for the next one, or the period’s close)',
  },
  PASSWORD_SCRYPT_LOG2_N: {
    parse: int(10, 20),
    default: 17,
    describe: 'scrypt cost of new password hashes (N = 2^17, r = 8, p = 1; `npm test` lowers it for its own processes)',
  },
  LIMIT_INGEST_RECORDS_PER_SECOND: {
    parse: int(1, 10_000_000),
    default: 20_000,
    describe: 'usage records per second per account (a batch of 100 counts 100)',
  },
  LIMIT_ATTRIBUTED_RECORDS_PER_SECOND: {
    parse: int(1, 100_000_000),
    default: 200_000,
    describe:
      'usage records per second an admin token may send for its customers, all together (the emitter’s ceiling; each record also counts against its customer’s ingest rate)',
  },
  LIMIT_REQUESTS_PER_SECOND: {
    parse: int(1, 1_000_000),
    default: 200,
    describe: 'other authenticated requests per second per account',
  },
  LIMIT_MAX_METERS: { parse: int(1, 1_000_000), default: 1_000, describe: 'meters per account (quota)' },
  LIMIT_MAX_WEBHOOKS: { parse: int(1, 10_000), default: 100, describe: 'webhook endpoints per account (quota)' },
  LIMIT_MAX_PAYMENT_METHODS: { parse: int(1, 10_000), default: 25, describe: 'payment methods per account (quota)' },
  SIGN_IN_BACKOFF_BASE_SECONDS: {
    parse: int(1, 3600),
    default: 1,
    describe: 'first wait of the sign-in backoff (doubles per further failure, at most 15 min)',
  },
  TRUSTED_PROXIES: {
    parse: allowing('comma-separated IP addresses and CIDR blocks', (raw) => parseTrustedProxies(raw)),
    default: NO_TRUSTED_PROXIES,
    shownDefault: 'empty',
    describe:
      'load balancers in front of the api (`10.0.0.5,10.1.0.0/16`): from these peers only, the client address is the right-most `X-Forwarded-For` entry that is not one of them (sign-in throttle, per-address body budget); empty: the socket peer',
  },
  MAX_BUFFERED_REQUEST_BYTES: {
    parse: int(1024 * 1024, 16 * 1024 * 1024 * 1024),
    default: 256 * 1024 * 1024,
    shownDefault: '256 MiB',
    describe: 'request body bytes an api process buffers at once across all requests; past it → 503 `overloaded`',
  },
  SHUTDOWN_DRAIN_SECONDS: {
    parse: int(0, 600),
    default: 10,
    describe: 'on SIGTERM/SIGINT the api stops accepting connections and waits this long for requests in flight',
  },
  MAX_BUFFERED_REQUEST_BYTES_PER_CALLER: {
    parse: int(1024 * 1024, 16 * 1024 * 1024 * 1024),
    default: (c) => Math.max(1024 * 1024, Math.floor((c.MAX_BUFFERED_REQUEST_BYTES ?? 256 * 1024 * 1024) / 8)),
    shownDefault: '1/8 of `MAX_BUFFERED_REQUEST_BYTES` (32 MiB), at least 1 MiB',
    describe: 'request body bytes one account (or client address) may have buffered at once',
  },
  BODY_READ_TIMEOUT_SECONDS: {
    parse: int(1, 600),
    default: 10,
    describe: 'seconds a request body may take to arrive before a 408',
  },
  USAGE_QUERY_MAX_EXECUTION_SECONDS: {
    parse: int(1, 3600),
    default: 10,
    describe: 'ClickHouse `max_execution_time` of a usage read; over it → 503',
  },
  USAGE_QUERIES_PER_ACCOUNT: {
    parse: int(1, 1000),
    default: 4,
    describe: 'usage reads of one account running at once per api process',
  },
  USAGE_QUERY_QUEUE_PER_ACCOUNT: {
    parse: int(0, 10_000),
    default: 16,
    describe: 'usage reads of one account waiting beyond those running; beyond → 503 `busy` + `Retry-After`',
  },
  WATCH_MAX_STALENESS_SECONDS: {
    parse: int(1, 3600),
    default: 10,
    describe:
      'how long the revocation list and meter registry (NATS KV watches) may go unconfirmed before tokens and ingest get 503',
  },
  METRICS_HOST: {
    parse: host,
    default: (c) => c.HOST ?? '127.0.0.1',
    shownDefault: '`HOST`, else `127.0.0.1`',
    describe: 'interface the consumer, dispatcher and billing roles serve /metrics on',
  },
  METRICS_PORT: {
    parse: int(0, 65535),
    default: 0,
    describe: 'port of /metrics of the consumer, dispatcher and billing roles (0 = any free port)',
  },
  ...SELLER_SPEC,
  ...PORTAL_SPEC,
  ...ENTITLEMENTS_SPEC,
  SMTP_URL: {
    parse: url(['smtp', 'smtps']),
    default: '',
    describe:
      'SMTP server the dispatcher sends invoice emails through (docs/emails.md), e.g. smtp://user:pass@host:587; empty: invoice emails are off',
  },
  ...PAYMENT_SPEC,
  ...EXPORT_SPEC,
  ...SSO_SPEC,
  MAIL_FROM: {
    parse: mailAddress,
    default: 'billing@localhost',
    describe:
      'From address of invoice emails when seller settings set no email_from: an address, or a name and address (Acme Billing <billing@acme.example>)',
  },
};

export const CONFIG_VARIABLES = Object.keys(SPEC) as (keyof Config)[];

/** Parses and validates every variable; throws one ConfigError listing every problem. */
export function parseConfig(env: Env = process.env): Config {
  const out: Partial<Config> = {};
  const problems: { variable: string; message: string }[] = [];
  // Order matters: derived defaults (PUBLIC_BASE_URL) read earlier values.
  for (const key of CONFIG_VARIABLES) {
    const spec = SPEC[key] as VarSpec<unknown>;
    const raw = env[key];
    try {
      if (raw === undefined || raw === '') {
        if (spec.default === undefined) throw new Error(`is required (${spec.describe})`);
        (out as Record<string, unknown>)[key] =
          typeof spec.default === 'function' ? (spec.default as (c: Partial<Config>) => unknown)(out) : spec.default;
      } else {
        (out as Record<string, unknown>)[key] = spec.parse(raw);
      }
    } catch (err) {
      problems.push({ variable: key, message: (err as Error).message });
    }
  }
  if (!problems.length) problems.push(...crossChecks(out as Config));
  if (problems.length) throw new ConfigError(problems);
  return Object.freeze(out as Config);
}

/** Rules between variables, once each one parsed. */
function crossChecks(c: Config): { variable: string; message: string }[] {
  const problems = [...paymentCrossChecks(c), ...ssoCrossChecks(c)];
  if (c.MAX_BUFFERED_REQUEST_BYTES_PER_CALLER > c.MAX_BUFFERED_REQUEST_BYTES)
    problems.push({
      variable: 'MAX_BUFFERED_REQUEST_BYTES_PER_CALLER',
      message: `must not exceed MAX_BUFFERED_REQUEST_BYTES (${c.MAX_BUFFERED_REQUEST_BYTES}), got ${c.MAX_BUFFERED_REQUEST_BYTES_PER_CALLER}`,
    });
  return problems;
}

/** One configuration variable as docs/operations.md lists it (`npm run docs` writes the table from these). */
export interface ConfigVariableDoc {
  variable: string;
  /** The default as text; `required` when there is none. */
  default: string;
  allows: string;
  meaning: string;
}

export function configReference(): ConfigVariableDoc[] {
  return CONFIG_VARIABLES.map((key) => {
    const spec = SPEC[key] as VarSpec<unknown>;
    const shown =
      spec.shownDefault ??
      (spec.default === undefined ? 'required' : spec.default === '' ? 'empty' : `\`${String(spec.default)}\``);
    return { variable: key, default: shown, allows: spec.parse.allows ?? '', meaning: spec.describe };
  });
}
