import { parseConfig, type Config } from '../../shared/config.js';
import { createPgPool, type PgPool } from '../../shared/clients/postgres.js';
import { DomainError } from '../../shared/errors.js';
import { setPasswordCost } from '../../shared/auth/password.js';
import { stackEnv } from './env.js';
import { EXIT, printError, printResult, UsageError } from './output.js';

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
