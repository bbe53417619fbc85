import { STACK_ROOT } from '../../shared/paths.js';

export type Command = (args: string[]) => Promise<number>;

/**
 * Every `meterline` command. Each loads its module on use: a CLI call pays only for what it runs
 * (`up` pulls in every role; `accounts create` should not).
 */
export const COMMANDS: Record<string, { run: Command; usage: string }> = {
  up: {
    run: async (args) => (await import('./up.js')).upCommand(args),
    usage:
      'up [--role api,consumer,dispatcher,billing] [--migrate] — start the stack, migrate, run every role (or the given ones); with --inventory F --host H: this host’s roles against the inventory’s servers (no servers started; --migrate to migrate first)',
  },
  stack: {
    run: async (args) => (await import('../../infra/stack/cli.js')).stackCommand(args, STACK_ROOT),
    usage: 'stack up|down|status — the local servers (with --inventory F --host H: this host’s servers)',
  },
  hosts: {
    run: async (args) => (await import('./hosts.js')).hostsCommand(args),
    usage:
      'hosts init --inventory F — check the inventory, write credentials.json and secret.key beside it (once, then copy the directory to every host); hosts haproxy --inventory F [--bind ADDR:PORT] — an haproxy.cfg for the api processes of the inventory',
  },
  migrate: {
    run: async () => (await import('./migrate.js')).migrateCommand(),
    usage: 'migrate — apply Postgres, ClickHouse and NATS migrations',
  },
  backup: {
    run: async (args) => (await import('./backup.js')).backupCommand(args),
    usage:
      'backup create --out DIR — Postgres, ClickHouse, the JetStream state to resume, secret.key and credentials.json, taken while everything runs; backup restore --from DIR — into an empty stack (started when it is not running) of this release or a later one, before its roles start (docs/backups.md)',
  },
  accounts: {
    run: async (args) => (await import('./accounts.js')).accountsCommand(args),
    usage:
      'accounts create --name N --email E --password P [--operator] | --demo — an account with its first user (--demo: with a meter, usage, a subscription and a card); accounts limits --account ID [--ingest-records-per-second N] [--requests-per-second N] [--max-meters N] [--max-webhooks N] [--max-payment-methods N] — per-account limits (alone: prints them)',
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
