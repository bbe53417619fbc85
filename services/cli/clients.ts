import { createClient } from '../domain/accounts/clients.js';
import { withControlPlane } from './control-plane.js';
import { parseFlags, stringFlag, UsageError } from './output.js';

/** `meterline clients create --name N --redirect-uri U [--redirect-uri U2 …] [--public]` → {client_id, client_secret} */
export async function clientsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'create') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
  const flags = parseFlags(rest, {
    strings: ['name'],
    multi: ['redirect-uri'],
    booleans: ['public'],
    required: ['name', 'redirect-uri'],
  });
  const name = stringFlag(flags, 'name')!;
  const redirectUris = flags['redirect-uri'] as string[];
  // The secret is printed once; only its hash is stored.
  return withControlPlane((pg) => createClient(pg, { name, redirectUris, isPublic: flags.public === true }));
}
