import { STACK_ROOT } from '../../shared/paths.js';

export type Command = (args: string[]) => Promise<number>;

/**
 * Every `meterline` command. Each loads its module on use: a CLI call pays only for what it runs
 * (`up` pulls in every role; `accounts create` should not).
 */
export const COMMANDS: Record<string, { run: Command; usage: string }> = {
  up: {
    run: async () => (await import('./up.js')).upCommand(),
    usage: 'up — start the stack, migrate, run every role',
  },
  stack: {
    run: async (args) => (await import('../../infra/stack/cli.js')).stackCommand(args, STACK_ROOT),
    usage: 'stack up|down|status — the local servers',
  },
  migrate: {
    run: async () => (await import('./migrate.js')).migrateCommand(),
    usage: 'migrate — apply Postgres, ClickHouse and NATS migrations',
  },
  accounts: {
    run: async (args) => (await import('./accounts.js')).accountsCommand(args),
    usage:
      'accounts create --name N --email E --password P [--operator] | --demo — an account with its first user (--demo: with a meter, usage, a subscription and a card); accounts limits --account ID [--ingest-records-per-second N] [--requests-per-second N] [--max-meters N] [--max-webhooks N] [--max-payment-methods N] — per-account limits (alone: prints them)',
  },
  customers: {
    run: async (args) => (await import('./customers.js')).customersCommand(args),
    usage:
      'customers sign-in --customer cus_… --email E [--password P] — a sign-in for one of a customer’s people (password generated and printed once when omitted)',
  },
  clients: {
    run: async (args) => (await import('./clients.js')).clientsCommand(args),
    usage: 'clients create --name N --redirect-uri U [--redirect-uri U2 …] [--public] — register an OAuth client',
  },
  tokens: {
    run: async (args) => (await import('./tokens.js')).tokensCommand(args),
    usage:
      'tokens issue --email E --client-id C --scope "read write" — operator tool: a token response without the browser',
  },
  billing: {
    run: async (args) => (await import('./billing.js')).billingCommand(args),
    usage:
      'billing run [--now ISO] — close the periods due at that instant (default now) and make the payment attempts due',
  },
};
