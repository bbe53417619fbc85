import { randomBytes } from 'node:crypto';
import type { PgPool } from '../../shared/clients/postgres.js';
import type { Config } from '../../shared/config.js';
import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { issueAccessToken } from '../../shared/auth/access-tokens.js';
import { UnavailableError } from '../../shared/errors.js';
import { createAccount, type CreatedAccount } from '../domain/accounts/store.js';
import { CONSOLE_CLIENT_ID, registerConsoleClient } from './client.js';
import { stripTrailing } from '../../shared/strings.js';

export interface DemoAccount extends CreatedAccount {
  email: string;
  /** Shown once, so the person who ran the command can sign in to the console. */
  password: string;
  operator: true;
  meter_id: string;
  subscription_id: string;
  payment_method_id: string;
  usage_records: number;
  console_url: string;
}

const HOUR_MS = 3_600_000;
/** Usage over the last three days: enough for the hour and day charts to show a shape. */
const DEMO_HOURS = 72;

/** One record per hour, a daily rhythm with a little noise; ids make a re-sent batch count once. */
export function demoUsage(meterId: string, now = Date.now()): { value: number; timestamp: string; id: string }[] {
  const out = [];
  for (let h = DEMO_HOURS - 1; h >= 0; h--) {
    const at = now - h * HOUR_MS - 60_000;
    const hourOfDay = new Date(at).getUTCHours();
    const value = Math.round(400 + 300 * Math.sin(((hourOfDay - 6) / 24) * 2 * Math.PI) + ((h * 37) % 50));
    out.push({ value, timestamp: new Date(at).toISOString(), id: `demo-${meterId}-${h}` });
  }
  return out;
}

/**
 * `meterline accounts create --demo`: an operator account to explore the console with — a meter with three
 * days of usage, a subscription (a flat plan and that meter, metered), a default test card. Everything but
 * the account is made through the running api's public /v1 API, exactly as a customer would, with a
 * five-minute token of the console's client; so `npm start` must be running.
 */
export async function createDemoAccount(
  pg: PgPool,
  config: Config,
  opts: { name?: string; email?: string; password?: string } = {},
): Promise<DemoAccount> {
  const base = stripTrailing(config.PUBLIC_BASE_URL, '/');
  await get(base, '/healthz'); // before creating anything: is the api there?
  const email = opts.email ?? `demo-${randomBytes(3).toString('hex')}@example.com`;
  const password = opts.password ?? randomBytes(12).toString('base64url');
  const ids = await createAccount(pg, { name: opts.name ?? 'Demo account', email, password, operator: true });

  await registerConsoleClient(pg, config.PUBLIC_BASE_URL);
  const keys = new SigningKeys(pg, config.SECRET_KEY);
  await keys.load();
  const { token } = await issueAccessToken(
    keys,
    { accountId: ids.account_id, userId: ids.user_id, clientId: CONSOLE_CLIENT_ID, scopes: ['admin'], role: 'owner' },
    { issuer: config.PUBLIC_BASE_URL, ttlSeconds: 300 },
  );
  const call = (method: string, path: string, body: unknown) => send(base, token, method, path, body);

  const meter = await call('POST', '/v1/meters', {
    name: 'API requests',
    unit: 'requests',
    type: 'counter',
    aggregation: 'sum',
  });
  const plan = await call('POST', '/v1/products', { name: 'Demo plan', price: 29, currency: 'USD' });
  const calls = await call('POST', '/v1/products', {
    name: 'Demo API requests',
    price: 0.001,
    currency: 'USD',
    pricing: 'metered',
  });
  const card = await call('POST', '/v1/billing/payment-methods', {
    type: 'card',
    card: { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '123' },
  });
  const subscription = await call('POST', '/v1/subscriptions', {
    items: [{ product_id: plan.id }, { product_id: calls.id, meter_id: meter.id }],
  });
  const usage = await call('POST', `/v1/meters/${meter.id}/usage`, demoUsage(meter.id));
  return {
    ...ids,
    email,
    password,
    operator: true,
    meter_id: meter.id,
    subscription_id: subscription.id,
    payment_method_id: card.id,
    usage_records: usage.accepted,
    console_url: `${base}/console`,
  };
}

async function get(base: string, path: string): Promise<void> {
  try {
    const res = await fetch(base + path);
    if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
  } catch (err) {
    throw new UnavailableError(
      `The api is not reachable at ${base} (${(err as Error).message}): start it with npm start, then run this command again.`,
    );
  }
}

async function send(base: string, token: string, method: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await res.json().catch(() => ({}))) as { detail?: string };
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${answer.detail ?? 'no detail'}`);
  return answer;
}
