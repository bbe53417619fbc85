import type { Config } from '../../shared/config.js';
import { createPgPool } from '../../shared/clients/postgres.js';
import { consoleRedirectUri } from './client.js';
import { anyUserExists } from '../domain/accounts/users-store.js';

/**
 * What `npm start` prints once every role is up: where the console is and, while the deployment has no
 * account yet, the one command that makes one to sign in with.
 */
export async function firstRunLines(config: Config): Promise<string[]> {
  const lines = [`console: ${consoleRedirectUri(config.PUBLIC_BASE_URL)}`];
  const pg = createPgPool(config.DATABASE_URL, 1);
  try {
    if (!(await anyUserExists(pg))) {
      lines.push(
        'no account yet — in another terminal, create one with demo data (it prints the email and password to sign in with):',
      );
      lines.push('  npx meterline accounts create --demo');
    }
  } finally {
    await pg.end();
  }
  return lines;
}
