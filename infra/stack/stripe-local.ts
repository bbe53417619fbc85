/**
 * `PAYMENT_PROCESSOR=stripe npm start` without a Stripe key (docs/payments.md "Trying Stripe locally"): the local
 * stack runs the Stripe simulator (test/stripe-sim/) beside its servers, under `.data/stripe-sim/`, and the roles
 * charge through it with the official SDK as they would through Stripe. Its secret key and webhook signing secret are
 * made once and kept in that directory, so a restart keeps the same simulated Stripe account and every charge in it.
 * With a key (STRIPE_SECRET_KEY or STRIPE_SECRET_KEY_FILE) nothing is started: the roles talk to Stripe itself.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startStripeSimServer, stripeSimUrl } from './stripe-sim.js';
import { stackDataDir } from './state.js';
import { PORT_BASE_VARIABLE } from './topology.js';

/** stripe-mock's usual port; with METERLINE_STACK_PORT_BASE=N, N + 90 (clear of the stack's own ports). */
const DEFAULT_PORT = 12111;
const PORT_OFFSET = 90;

export interface LocalStripe {
  url: string;
  /** PAYMENT_PROCESSOR, STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, STRIPE_API_BASE for the roles. */
  settings: Record<string, string>;
  /** Sends the simulated account's webhooks to this api's /v1/processors/stripe/webhook. */
  registerWebhook(publicBaseUrl: string): Promise<void>;
  stop(): Promise<void>;
}

export function wantsLocalStripe(env: NodeJS.ProcessEnv): boolean {
  return env.PAYMENT_PROCESSOR === 'stripe' && !env.STRIPE_SECRET_KEY?.trim() && !env.STRIPE_SECRET_KEY_FILE?.trim();
}

const port = (env: NodeJS.ProcessEnv) => {
  const base = Number(env[PORT_BASE_VARIABLE]?.trim() || 0);
  return base > 0 ? base + PORT_OFFSET : DEFAULT_PORT;
};

/**
 * The running simulator's settings for a command beside `npm start` (`meterline billing run`): read from its keys
 * file; null when it was never started.
 */
export async function localStripeSettings(
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, string> | null> {
  try {
    const keys = JSON.parse(await readFile(path.join(stackDataDir(root, env), 'stripe-sim', 'keys.json'), 'utf8'));
    return {
      PAYMENT_PROCESSOR: 'stripe',
      STRIPE_SECRET_KEY: keys.secretKey,
      STRIPE_WEBHOOK_SECRET: keys.webhookSecret,
      STRIPE_API_BASE: stripeSimUrl(port(env)),
    };
  } catch {
    return null;
  }
}

export async function startLocalStripe(root: string, env: NodeJS.ProcessEnv): Promise<LocalStripe> {
  const dir = path.join(stackDataDir(root, env), 'stripe-sim');
  await mkdir(dir, { recursive: true });
  const keysFile = path.join(dir, 'keys.json');
  let keys: { secretKey: string; webhookSecret: string };
  try {
    keys = JSON.parse(await readFile(keysFile, 'utf8'));
  } catch {
    keys = {
      secretKey: `sk_test_local_${randomBytes(12).toString('hex')}`,
      webhookSecret: `whsec_${randomBytes(16).toString('hex')}`,
    };
    await writeFile(keysFile, JSON.stringify(keys), { mode: 0o600 });
  }
  const handle = await startStripeSimServer({ dir, port: port(env) });
  return {
    url: handle.url,
    settings: {
      PAYMENT_PROCESSOR: 'stripe',
      STRIPE_SECRET_KEY: keys.secretKey,
      STRIPE_WEBHOOK_SECRET: keys.webhookSecret,
      STRIPE_API_BASE: handle.url,
    },
    registerWebhook: async (publicBaseUrl) => {
      const res = await fetch(`${handle.url}/_sim/webhook_endpoint`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          url: `${publicBaseUrl.replace(/\/$/, '')}/v1/processors/stripe/webhook`,
          secret: keys.webhookSecret,
        }),
      });
      if (!res.ok) throw new Error(`the Stripe simulator refused its webhook endpoint: HTTP ${res.status}`);
    },
    stop: () => handle.stop(),
  };
}
