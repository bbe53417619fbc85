import { connectNats, NatsNames } from '../../shared/clients/nats.js';
import { addSignIn } from '../domain/customers/sign-ins-store.js';
import { toSignIn } from '../control/customers/representation.js';
import { CustomerRegistryWriter } from '../domain/customers/registry-writer.js';
import type { Config } from '../../shared/config.js';
import { withControlPlane } from './control-plane.js';
import { parseFlags, stringFlag, UsageError } from './output.js';

/**
 * `meterline customers sign-in --customer cus_… --email E [--password P]` → the user `{id, customer_id, email,
 * password?}` (the password only when generated): one of a customer's people can then sign in to the console
 * and OAuth apps for that customer. The same as POST /v1/customers/{id}/users.
 */
export async function customersCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'sign-in') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
  const flags = parseFlags(rest, { strings: ['customer', 'email', 'password'], required: ['customer', 'email'] });
  const customerId = stringFlag(flags, 'customer')!;
  const email = stringFlag(flags, 'email')!;
  const password = stringFlag(flags, 'password');
  if (password !== undefined && (password.length < 8 || password.length > 1024))
    throw new UsageError('--password must be 8–1024 characters');
  return withControlPlane(async (pg) => {
    const { row, generatedPassword } = await addSignIn(pg, customerId, { email, password });
    return toSignIn(row, generatedPassword);
  });
}

/**
 * The customer registry writer of the CLI's own NATS connection, for commands that make accounts. NATS out of
 * reach (or its bucket not migrated yet) is no reason to refuse an account: `fn` then gets none, and the api's
 * reconciliation puts the account in the registry within minutes.
 */
export async function withRegistryWriter<T>(
  config: Config,
  fn: (registry: CustomerRegistryWriter | undefined) => Promise<T>,
): Promise<T> {
  let nc: Awaited<ReturnType<typeof connectNats>> | undefined;
  let registry: CustomerRegistryWriter | undefined;
  try {
    nc = await connectNats(config.NATS_URL, 'meterline-cli-accounts');
    registry = await CustomerRegistryWriter.open(nc, new NatsNames(config.NATS_NAMESPACE).customerBucket);
    await registry.kv.status(); // opening binds lazily: a bucket that doesn't exist fails here, not at the put
  } catch {
    registry = undefined;
  }
  try {
    return await fn(registry);
  } finally {
    await nc?.close().catch(() => undefined);
  }
}
