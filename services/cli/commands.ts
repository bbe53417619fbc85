import { STACK_ROOT } from '../../shared/paths.js';

export type Command = (args: string[]) => Promise<number>;

/** What `meterline <command> --help` prints (services/cli/help.ts renders it). */
export interface CommandHelp {
  /** One line: what the command is for (also its line in `meterline --help`). */
  summary: string;
  /** Synopsis lines, without the leading `meterline`. */
  usage: string[];
  /** Flag → what it means. */
  options?: [string, string][];
  /** Paragraphs printed after the options. */
  notes?: string[];
}

export interface CommandSpec extends CommandHelp {
  run: Command;
}

/**
 * Every `meterline` command. Each loads its module on use: a CLI call pays only for what it runs
 * (`up` pulls in every role; `accounts create` should not). The reference with examples is docs/cli.md.
 */
export const COMMANDS: Record<string, CommandSpec> = {
  up: {
    run: async (args) => (await import('./up.js')).upCommand(args),
    summary: 'start the local servers, migrate, run every role (what npm start runs)',
    usage: [
      'up [--role api,consumer,dispatcher,billing] [--migrate]',
      'up --inventory F --host H [--role R,…] [--migrate]',
    ],
    options: [
      ['--role R,…', 'run only these roles (repeatable or comma-separated; default every role)'],
      [
        '--inventory F --host H',
        'this host of an inventory: its roles against the inventory’s servers, no servers started (docs/hosts.md)',
      ],
      ['--migrate', 'with --inventory: apply migrations first'],
    ],
    notes: [
      'Prints {base_url, console_url, listening, roles, servers, migrations} once every role is ready; Ctrl-C stops the roles, then the servers it started. Other commands read the base URL it serves (tokens are signed for it).',
    ],
  },
  stack: {
    run: async (args) => (await import('../../infra/stack/cli.js')).stackCommand(args, STACK_ROOT),
    summary: 'the local servers only (Postgres, NATS, ClickHouse): start, stop, show',
    usage: ['stack up|down|status [--verbose]', 'stack up|down|status --inventory F --host H'],
    options: [
      ['--verbose', 'progress on stderr'],
      ['--inventory F --host H', 'this host’s servers of an inventory (docs/hosts.md)'],
    ],
    notes: ['down stops exactly the processes the stack started; status shows each server and role with its ports.'],
  },
  hosts: {
    run: async (args) => (await import('./hosts.js')).hostsCommand(args),
    summary: 'prepare an inventory of several hosts: credentials, secret key, an HAProxy configuration',
    usage: [
      'hosts init --inventory F',
      'hosts haproxy --inventory F [--bind ADDR:PORT] [--stats-port N [--stats-bind ADDR]]',
    ],
    notes: [
      'init checks the inventory and writes credentials.json and secret.key beside it (once; then copy the directory to every host); haproxy prints an haproxy.cfg for the api processes of the inventory (docs/hosts.md): client addresses in X-Forwarded-For (name the load balancer in TRUSTED_PROXIES), the stats page on loopback unless --stats-bind, behind user meterline and a password derived from secret.key.',
    ],
  },
  migrate: {
    run: async () => (await import('./migrate.js')).migrateCommand(),
    summary: 'apply pending Postgres, ClickHouse and NATS migrations to the running servers',
    usage: ['migrate'],
  },
  backup: {
    run: async (args) => (await import('./backup.js')).backupCommand(args),
    summary: 'back up the running servers, or restore a backup into an empty stack',
    usage: ['backup create --out DIR', 'backup restore --from DIR'],
    options: [
      [
        '--out DIR',
        'create: where the backup goes (Postgres, ClickHouse, the JetStream state to resume, secret.key, credentials.json), taken while everything runs',
      ],
      [
        '--from DIR',
        'restore: into an empty stack (started when it is not running) of this release or a later one, before its roles start',
      ],
    ],
    notes: ['docs/backups.md: what is in a backup, the procedure, the measured RPO and RTO.'],
  },
  accounts: {
    run: async (args) => (await import('./accounts.js')).accountsCommand(args),
    summary: 'create an account with its first user, or set an account’s limits',
    usage: [
      'accounts create --name N --email E --password P [--operator]',
      'accounts create --demo [--name N] [--email E] [--password P]',
      'accounts limits --account ID [--ingest-records-per-second N] [--attributed-records-per-second N] [--requests-per-second N] [--max-meters N] [--max-webhooks N] [--max-payment-methods N]',
    ],
    options: [
      ['--name N', 'the account’s name'],
      ['--email E', 'the first user’s email (they sign in with it)'],
      ['--password P', 'the first user’s password (at least 10 characters)'],
      ['--operator', 'the user may hold the admin scope: the product catalog, credits, credit notes, voiding invoices'],
      ['--demo', 'with npm start running: an operator account with a meter, usage, a subscription and a card'],
      ['--account ID', 'limits: the account (acct_…); without a limit flag, prints its limits'],
    ],
    notes: ['create → {account_id, customer_id, user_id}; limits → {account_id, limits, overrides, defaults}.'],
  },
  customers: {
    run: async (args) => (await import('./customers.js')).customersCommand(args),
    summary: 'give one of a customer’s people a sign-in (console, OAuth apps)',
    usage: ['customers sign-in --customer cus_… --email E [--password P]'],
    options: [
      ['--customer cus_…', 'the customer (operator mode: docs/operator-mode.md)'],
      ['--email E', 'the person’s email (they sign in with it)'],
      ['--password P', 'their password (8–1024 characters); generated and printed once when omitted'],
    ],
  },
  clients: {
    run: async (args) => (await import('./clients.js')).clientsCommand(args),
    summary: 'register an OAuth client (an app that asks users for tokens)',
    usage: ['clients create --name N --redirect-uri U [--redirect-uri U2 …] [--public]'],
    options: [
      ['--name N', 'shown on the consent page'],
      ['--redirect-uri U', 'where the authorization code goes back to; repeat for several'],
      ['--public', 'no client secret (a native or browser app using PKCE)'],
    ],
    notes: ['→ {client_id, client_secret}; the secret is printed once (only its hash is kept).'],
  },
  tokens: {
    run: async (args) => (await import('./tokens.js')).tokensCommand(args),
    summary: 'operator tool: a token response for a user without the browser',
    usage: ['tokens issue --email E --client-id C [--scope "read write"]'],
    options: [
      ['--email E', 'the user the token acts for'],
      ['--client-id C', 'an OAuth client (meterline clients create)'],
      ['--scope S', 'space-separated read, write, admin (default read); admin only for operator users'],
    ],
    notes: [
      'The token’s issuer is the base URL of the api `meterline up` runs (PUBLIC_BASE_URL overrides it, with a warning when they differ). A scope the user may not hold is left out and named on stderr.',
    ],
  },
  billing: {
    run: async (args) => (await import('./billing.js')).billingCommand(args),
    summary: 'close the billing periods due and make the payment attempts due, once',
    usage: ['billing run [--now ISO]'],
    options: [['--now ISO', 'the instant to run at, RFC 3339 (default: now)']],
    notes: [
      'A period closes BILLING_GRACE_SECONDS (default 3600) after it ends, so late usage still counts. → {invoices, payments}; when nothing closed, also {reason, next_due_at}. Progress on stderr.',
    ],
  },
  exports: {
    run: async (args) => (await import('./exports.js')).exportsCommand(args),
    summary: 'add the export schedules’ windows that ended and write every export due, once',
    usage: ['exports run [--now ISO] [--page-rows N]'],
    options: [
      ['--now ISO', 'the instant to run at, RFC 3339 (default: now)'],
      ['--page-rows N', 'rows read and written per page (default 50000): memory against speed'],
    ],
    notes: [
      'What the billing role does every few seconds (docs/exports.md). → {added, completed, failed, max_rss_bytes}; exit 1 when an export failed (it is retried, up to 3 runs).',
    ],
  },
};
