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

import { stripTrailing } from './strings.js';

type Env = Record<string, string | undefined>;
type Parser<T> = (raw: string) => T; // throws Error(message) on a bad value

interface VarSpec<T> {
  parse: Parser<T>;
  /** Used when the variable is unset or empty; `undefined` means required. */
  default?: T | ((c: Partial<Config>) => T);
  describe: string;
}

const int =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error(`must be an integer from ${min} to ${max}, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`must be an integer from ${min} to ${max}, got ${n}`);
    return n;
  };

const bool: Parser<boolean> = (raw) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error(`must be true or false, got "${raw}"`);
};

const url =
  (protocols: string[]): Parser<string> =>
  (raw) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`must be a URL (${protocols.join(' or ')}), got "${raw}"`);
    }
    if (!protocols.includes(u.protocol.replace(/:$/, ''))) {
      throw new Error(`must use ${protocols.map((p) => p + '://').join(' or ')}, got "${u.protocol}//"`);
    }
    return stripTrailing(raw, '/');
  };

/** A comma-separated list of URLs (several servers of one cluster), each checked like `url`. */
const urlList =
  (protocols: string[]): Parser<string> =>
  (raw) => {
    const parts = raw.split(',').map((s) => s.trim());
    if (parts.some((p) => p === '')) throw new Error(`must be one URL or a comma-separated list of URLs, got "${raw}"`);
    return parts.map(url(protocols)).join(',');
  };

const oneOf =
  <T extends string>(values: readonly T[]): Parser<T> =>
  (raw) => {
    if (!(values as readonly string[]).includes(raw))
      throw new Error(`must be one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };

const host: Parser<string> = (raw) => {
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(raw)) throw new Error(`must be a host name or IP address, got "${raw}"`);
  return raw;
};

const name: Parser<string> = (raw) => {
  if (!/^[a-z][a-z0-9_]{0,30}$/.test(raw)) throw new Error(`must match [a-z][a-z0-9_]{0,30}, got "${raw}"`);
  return raw;
};

const secretKey: Parser<Buffer> = (raw) => {
  const v = raw.trim();
  const bytes = /^[0-9a-fA-F]+$/.test(v) && v.length % 2 === 0 ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (bytes.length < 32) throw new Error(`must hold at least 32 random bytes (hex or base64), got ${bytes.length}`);
  return bytes;
};

export const API_ROUTE_SETS = ['all', 'ingress', 'control'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface Config {
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
   * The ClickHouse cluster (its `remote_servers` name): migrations run ON CLUSTER and create replicated
   * local tables plus Distributed tables under today's names; empty = one server, plain tables.
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
  /**
   * 32+ random bytes (hex or base64) keying what must not be stored in clear: signing keys at rest,
   * card fingerprints, CSRF tokens. `meterline up` and `npm test` create one under .data/ when unset.
   */
  SECRET_KEY: Buffer;
  /** A period closes (is invoiced) this long after its end, so late usage of the period still counts. */
  BILLING_GRACE_SECONDS: number;
  /** How often the billing role looks for periods to close and payment attempts due. */
  BILLING_INTERVAL_SECONDS: number;
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
  /** Request body bytes buffered at once across all requests of the process; past it → 503 overloaded. */
  MAX_BUFFERED_REQUEST_BYTES: number;
  /** How long stop() waits for in-flight requests before closing connections and pools. */
  SHUTDOWN_DRAIN_SECONDS: number;
  /** ClickHouse max_execution_time of usage reads. */
  USAGE_QUERY_MAX_EXECUTION_SECONDS: number;
  /** Usage reads running at once per account (per process), and how many more may wait. */
  USAGE_QUERIES_PER_ACCOUNT: number;
  USAGE_QUERY_QUEUE_PER_ACCOUNT: number;
  /** How long the revocation list and meter registry may go unconfirmed before tokens/ingest get 503. */
  WATCH_MAX_STALENESS_SECONDS: number;
}

const SPEC: { [K in keyof Config]: VarSpec<Config[K]> } = {
  HOST: { parse: host, default: '127.0.0.1', describe: 'interface the api listens on' },
  PORT: { parse: int(0, 65535), default: 8080, describe: 'port the api listens on (0 = any free port)' },
  PUBLIC_BASE_URL: {
    parse: url(['http', 'https']),
    default: (c) => `http://${c.HOST ?? '127.0.0.1'}:${c.PORT ?? 8080}`,
    describe: 'external base URL; the OAuth issuer',
  },
  DATABASE_URL: { parse: url(['postgres', 'postgresql']), describe: 'Postgres connection URL' },
  NATS_URL: {
    parse: urlList(['nats', 'tls']),
    describe: "NATS server URL, or a comma-separated list of a cluster's servers (JetStream enabled)",
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
    parse: (raw) => (raw === '' ? '' : name(raw)),
    default: '',
    describe: 'ClickHouse cluster name (remote_servers): replicated, sharded tables',
  },
  CLICKHOUSE_DATABASE: { parse: name, default: 'meterline', describe: 'ClickHouse database for usage' },
  NATS_NAMESPACE: {
    parse: (raw) => (raw === '' ? '' : name(raw)),
    default: '',
    describe: 'prefix of NATS stream/subject/bucket names',
  },
  ACCESS_TOKEN_TTL_SECONDS: { parse: int(60, 86_400), default: 3600, describe: 'access token lifetime' },
  WEBHOOKS_ALLOW_PRIVATE_URLS: { parse: bool, default: false, describe: 'allow http:// and private webhook targets' },
  API_ROUTES: { parse: oneOf(API_ROUTE_SETS), default: 'all', describe: 'routes the api mounts' },
  LOG_LEVEL: { parse: oneOf(LOG_LEVELS), default: 'info', describe: 'log level' },
  USAGE_STREAM_MAX_BYTES: {
    parse: int(1 << 20, Number.MAX_SAFE_INTEGER),
    default: 4 * 1024 ** 3,
    describe: 'byte cap of the USAGE stream',
  },
  USAGE_STREAM_MAX_INFLIGHT: {
    parse: int(1, 10_000),
    default: 64,
    describe: 'unacknowledged frames per usage WebSocket before the server stops reading it',
  },
  SECRET_KEY: { parse: secretKey, describe: 'at least 32 random bytes, hex or base64' },
  BILLING_GRACE_SECONDS: {
    parse: int(0, 35 * 86_400),
    default: 3600,
    describe: 'wait after a period ends before invoicing it (late usage)',
  },
  BILLING_INTERVAL_SECONDS: {
    parse: int(1, 86_400),
    default: 60,
    describe: 'how often the billing role closes periods and retries payments',
  },
  PASSWORD_SCRYPT_LOG2_N: {
    parse: int(10, 20),
    default: 17,
    describe: 'log2 of the scrypt cost of new password hashes',
  },
  LIMIT_INGEST_RECORDS_PER_SECOND: {
    parse: int(1, 10_000_000),
    default: 20_000,
    describe: 'usage records per second per account (default)',
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
    describe: 'control-plane requests per second per account (default)',
  },
  LIMIT_MAX_METERS: { parse: int(1, 1_000_000), default: 1_000, describe: 'meters per account (default)' },
  LIMIT_MAX_WEBHOOKS: { parse: int(1, 10_000), default: 100, describe: 'webhook endpoints per account (default)' },
  LIMIT_MAX_PAYMENT_METHODS: { parse: int(1, 10_000), default: 25, describe: 'payment methods per account (default)' },
  SIGN_IN_BACKOFF_BASE_SECONDS: {
    parse: int(1, 3600),
    default: 1,
    describe: 'first sign-in backoff wait in seconds (doubles per further failure)',
  },
  MAX_BUFFERED_REQUEST_BYTES: {
    parse: int(1024 * 1024, 16 * 1024 * 1024 * 1024),
    default: 256 * 1024 * 1024,
    describe: 'request body bytes buffered at once across all requests',
  },
  SHUTDOWN_DRAIN_SECONDS: { parse: int(0, 600), default: 10, describe: 'seconds stop() waits for in-flight requests' },
  USAGE_QUERY_MAX_EXECUTION_SECONDS: {
    parse: int(1, 3600),
    default: 10,
    describe: 'ClickHouse max_execution_time of usage reads',
  },
  USAGE_QUERIES_PER_ACCOUNT: { parse: int(1, 1000), default: 4, describe: 'usage reads running at once per account' },
  USAGE_QUERY_QUEUE_PER_ACCOUNT: {
    parse: int(0, 10_000),
    default: 16,
    describe: 'usage reads waiting per account beyond those running',
  },
  WATCH_MAX_STALENESS_SECONDS: {
    parse: int(1, 3600),
    default: 10,
    describe: 'seconds the revocation and meter watches may go unconfirmed before failing closed',
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
  if (problems.length) throw new ConfigError(problems);
  return Object.freeze(out as Config);
}
