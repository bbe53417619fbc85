/**
 * The Stripe simulator (test/stripe-sim/, docs/payments.md): a Stripe-compatible HTTP server for the tests
 * (test/fixtures/stripe.ts). Launched like the other servers — its own process, pid file, log and
 * readiness probe — from the compiled `dist/test/stripe-sim/main.js`. Its objects persist in `<dir>/state.json`, so
 * a restart keeps every charge.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, named, type ServerHandle } from './launch.js';
import { httpGet, probing, urlHost, type ProbeResult } from './probe.js';

const MAIN = fileURLToPath(new URL('../../test/stripe-sim/main.js', import.meta.url));

export interface StripeSimOptions {
  dir: string;
  port: number;
  host?: string;
  /** Where every account sends its webhooks until it sets its own (the api's /v1/processors/stripe/webhook). */
  webhook?: { url: string; secret: string };
  timeoutMs?: number;
}

export const stripeSimUrl = (port: number, host = '127.0.0.1') => `http://${urlHost(host)}:${port}`;

function probeStripeSim(url: string): Promise<ProbeResult> {
  return probing(async () => {
    const r = await httpGet(new URL('/_sim/health', url));
    return r.status === 200 ? { ok: true, detail: 'stripe simulator' } : { ok: false, detail: `HTTP ${r.status}` };
  });
}

export function startStripeSimServer(o: StripeSimOptions): Promise<ServerHandle> {
  return named('stripe', async () => {
    const dir = path.resolve(o.dir);
    const host = o.host ?? '127.0.0.1';
    await mkdir(dir, { recursive: true });
    const logFile = path.join(dir, 'stripe-sim.log');
    const webhookArgs = o.webhook ? ['--webhook-url', o.webhook.url, '--webhook-secret', o.webhook.secret] : [];
    return launch({
      server: 'stripe',
      command: { command: process.execPath, args: [MAIN] },
      args: ['--host', host, '--port', String(o.port), '--state', path.join(dir, 'state.json'), ...webhookArgs],
      dir,
      stdoutLog: logFile,
      logFile,
      url: stripeSimUrl(o.port, host),
      probe: probeStripeSim,
      stopSignal: 'SIGTERM',
      ports: [{ port: o.port, role: 'http port' }],
      host,
      timeoutMs: o.timeoutMs,
    });
  });
}
