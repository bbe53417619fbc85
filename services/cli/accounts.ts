import { parseConfig, type Config } from '../../shared/config.js';
import { createPgPool, type PgPool } from '../../shared/clients/postgres.js';
import { DomainError } from '../../shared/errors.js';
import { setPasswordCost } from '../../shared/auth/password.js';
import { createAccount } from '../control/accounts/store.js';
import { stackEnv } from './env.js';
import { EXIT, parseFlags, printError, printResult, UsageError } from './output.js';

/** Runs `fn` against the configured (or local stack's) Postgres; API errors print as JSON with their code. */
export async function withControlPlane(fn: (pg: PgPool, config: Config) => Promise<unknown>): Promise<number> {
  const config = parseConfig(await stackEnv({ launch: false }));
  const pg = createPgPool(config.DATABASE_URL, 2);
  setPasswordCost(config.PASSWORD_SCRYPT_LOG2_N);
  try {
    printResult(await fn(pg, config));
    return EXIT.ok;
  } catch (err) {
    if (err instanceof DomainError) {
      printError(err.detail, { code: err.code, ...(err.errors ? { errors: err.errors } : {}) });
      return EXIT.failure;
    }
    throw err;
  } finally {
    await pg.end();
  }
}

export function requireFlag(flags: Record<string, unknown>, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/**
 * `meterline accounts create --name N --email E --password P [--operator]` → {account_id, customer_id, user_id};
 * `--demo` (other flags optional) → the same plus demo data to explore the console with (services/console/demo.ts).
 */
export async function accountsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'limits') return (await import('./account-limits.js')).accountLimitsCommand(rest);
  if (sub !== 'create') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
  const flags = parseFlags(rest, { strings: ['name', 'email', 'password'], booleans: ['operator', 'demo'] });
  if (flags.demo === true) {
    // An operator account with a meter, usage, a subscription and a card, made through the running api.
    const { createDemoAccount } = await import('../console/demo.js');
    const str = (k: string) => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);
    return withControlPlane((pg, config) => createDemoAccount(pg, config, { name: str('name'), email: str('email'), password: str('password') }));
  }
  const input = { name: requireFlag(flags, 'name'), email: requireFlag(flags, 'email'), password: requireFlag(flags, 'password'), operator: flags.operator === true };
  return withControlPlane((pg) => createAccount(pg, input));
}
