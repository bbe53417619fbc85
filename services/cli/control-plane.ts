import { parseConfig, type Config } from '../../shared/config.js';
import { createPgPool, type PgPool } from '../../shared/clients/postgres.js';
import { DomainError } from '../../shared/errors.js';
import { setPasswordCost } from '../../shared/auth/password.js';
import { stackEnv } from './env.js';
import { EXIT, printError, printResult } from './output.js';
import { apiBaseUrl } from './running-api.js';

/**
 * Runs `fn` against the configured (or local stack's) Postgres; API errors print as JSON with their code.
 * `usesApi`: the command signs tokens for, or calls, the api — its PUBLIC_BASE_URL becomes the running api's
 * (services/cli/running-api.ts).
 */
export async function withControlPlane(
  fn: (pg: PgPool, config: Config) => Promise<unknown>,
  opts: { usesApi?: boolean } = {},
): Promise<number> {
  const env = await stackEnv({ launch: false });
  let config = parseConfig(env);
  if (opts.usesApi)
    config = { ...config, PUBLIC_BASE_URL: apiBaseUrl(env, config.PUBLIC_BASE_URL, config.DATABASE_URL) };
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
