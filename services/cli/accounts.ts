import { createAccount } from '../domain/accounts/store.js';
import { withControlPlane } from './control-plane.js';
import { withRegistryWriter } from './customers.js';
import { parseFlags, stringFlag, UsageError } from './output.js';

/**
 * `meterline accounts create --name N --email E --password P [--operator]` → {account_id, customer_id, user_id};
 * `--demo` (other flags optional) → the same plus demo data to explore the console with (services/console/demo.ts).
 */
export async function accountsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'limits') return (await import('./account-limits.js')).accountLimitsCommand(rest);
  if (sub !== 'create') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
  const demo = rest.includes('--demo');
  const flags = parseFlags(rest, {
    strings: ['name', 'email', 'password'],
    booleans: ['operator', 'demo'],
    required: demo ? [] : ['name', 'email', 'password'],
  });
  const str = (k: string) => stringFlag(flags, k);
  if (demo) {
    // An operator account with a meter, usage, a subscription and a card, made through the running api.
    const { createDemoAccount } = await import('../console/demo.js');
    return withControlPlane(
      (pg, config) =>
        createDemoAccount(pg, config, { name: str('name'), email: str('email'), password: str('password') }),
      { usesApi: true },
    );
  }
  const input = {
    name: str('name')!,
    email: str('email')!,
    password: str('password')!,
    operator: flags.operator === true,
  };
  // In the customer registry at once: an operator can attribute usage to it by customer_id right away.
  return withControlPlane((pg, config) => withRegistryWriter(config, (registry) => createAccount(pg, input, registry)));
}
