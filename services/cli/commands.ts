import { stackCommand } from '../../infra/stack/cli.js';
import { REPO_ROOT } from '../../shared/paths.js';
import { upCommand } from './up.js';
import { migrateCommand } from './migrate.js';
import { accountsCommand } from './accounts.js';
import { clientsCommand } from './clients.js';
import { tokensCommand } from './tokens.js';

export type Command = (args: string[]) => Promise<number>;

/** Every `meterline` command. Domains add theirs here (accounts, clients, tokens, billing). */
export const COMMANDS: Record<string, { run: Command; usage: string }> = {
  up: { run: () => upCommand(), usage: 'up — start the stack, migrate, run every role' },
  stack: { run: (args) => stackCommand(args, REPO_ROOT), usage: 'stack up|down|status — the local servers' },
  migrate: { run: () => migrateCommand(), usage: 'migrate — apply Postgres, ClickHouse and NATS migrations' },
  accounts: { run: accountsCommand, usage: 'accounts create --name N --email E --password P [--operator] — an account with its first user' },
  clients: { run: clientsCommand, usage: 'clients create --name N --redirect-uri U [--redirect-uri U2 …] [--public] — register an OAuth client' },
  tokens: { run: tokensCommand, usage: 'tokens issue --email E --client-id C --scope "read write" — operator tool: a token response without the browser' },
};
