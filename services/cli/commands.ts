import { stackCommand } from '../../infra/stack/cli.js';
import { REPO_ROOT } from '../../shared/paths.js';
import { upCommand } from './up.js';
import { migrateCommand } from './migrate.js';

export type Command = (args: string[]) => Promise<number>;

/** Every `meterline` command. Domains add theirs here (accounts, clients, tokens, billing). */
export const COMMANDS: Record<string, { run: Command; usage: string }> = {
  up: { run: () => upCommand(), usage: 'up — start the stack, migrate, run every role' },
  stack: { run: (args) => stackCommand(args, REPO_ROOT), usage: 'stack up|down|status — the local servers' },
  migrate: { run: () => migrateCommand(), usage: 'migrate — apply Postgres, ClickHouse and NATS migrations' },
};
