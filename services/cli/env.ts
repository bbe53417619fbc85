import { stackUp, stackStatus } from '../../infra/stack/stack.js';
import { readCredentials } from '../../infra/stack/credentials.js';
import { profileEnvironment } from '../../infra/stack/host-env.js';
import { selectedHost } from '../../infra/stack/inventory.js';
import { STACK_ROOT, stackSecretFile } from '../../shared/paths.js';
import { ensureSecretFile } from '../../shared/secret.js';
import { localStripeSettings, wantsLocalStripe } from '../../infra/stack/stripe-local.js';

/**
 * The environment a command runs with: the caller's, plus the local stack's server URLs for any of
 * DATABASE_URL / NATS_URL / CLICKHOUSE_URL not set. `launch` starts the stack when it isn't running. On one host
 * of an inventory (METERLINE_INVENTORY, METERLINE_HOST): the inventory's servers, as the schema's owner.
 */
export async function stackEnv(opts: { launch: boolean; log?: (m: string) => void }): Promise<NodeJS.ProcessEnv> {
  const selected = selectedHost(process.env);
  if (selected) {
    const { inventory, host } = selected;
    return { ...process.env, ...profileEnvironment(inventory, host, readCredentials(STACK_ROOT), 'migrate') };
  }
  const env = { ...process.env };
  env.SECRET_KEY ||= await ensureSecretFile(stackSecretFile());
  // PAYMENT_PROCESSOR=stripe without a key: the simulator `npm start` runs (infra/stack/stripe-local.ts).
  if (wantsLocalStripe(env)) Object.assign(env, await localStripeSettings(STACK_ROOT, env));
  if (env.DATABASE_URL && env.NATS_URL && env.CLICKHOUSE_URL) return env;
  const info = opts.launch
    ? await stackUp({ root: STACK_ROOT, env, log: opts.log })
    : await stackStatus({ root: STACK_ROOT, env });
  const down = info.servers.filter((s) => !s.running).map((s) => s.name);
  if (down.length)
    throw new Error(
      `not running: ${down.join(', ')} — run "meterline stack up" or set DATABASE_URL, NATS_URL and CLICKHOUSE_URL`,
    );
  // Operator commands (migrate, accounts) work on the app's schema with the owner's rights.
  return { ...info.settings, ...env, ...info.profiles.migrate };
}
