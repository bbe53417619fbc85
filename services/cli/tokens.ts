import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { grantableScopes, parseScopeParam } from '../../shared/auth/types.js';
import { NotFoundError, ValidationError } from '../../shared/errors.js';
import { createLogger } from '../../shared/logging.js';
import { findClient } from '../domain/accounts/clients-store.js';
import { findUserByEmail } from '../domain/accounts/users-store.js';
import { issueTokensForUser } from '../control/oauth/grants.js';
import { withControlPlane } from './control-plane.js';
import { parseFlags, printWarning, stringFlag, UsageError } from './output.js';

/**
 * `meterline tokens issue --email E --client-id C --scope "read write"` → token response.
 * An operator tool (scripts, benchmarks): a grant without the browser, same scope rule as consent
 * (admin only for operator users: a withheld scope is named on stderr), tokens signed by the same keys for the
 * running api's issuer (services/cli/running-api.ts) and revocable like any others.
 */
export async function tokensCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'issue') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
  const flags = parseFlags(rest, { strings: ['email', 'client-id', 'scope'], required: ['email', 'client-id'] });
  const email = stringFlag(flags, 'email')!;
  const clientId = stringFlag(flags, 'client-id')!;
  const parsed = parseScopeParam(stringFlag(flags, 'scope') ?? 'read');
  if ('unknown' in parsed) throw new UsageError(`unknown scope "${parsed.unknown}" (use read, write, admin)`);
  if (!parsed.scopes.length) throw new UsageError('--scope must name at least one of read, write, admin');
  return withControlPlane(
    async (pg, config) => {
      const user = await findUserByEmail(pg, email);
      if (!user) throw new NotFoundError(`No user has the email ${email}.`);
      const client = await findClient(pg, clientId);
      if (!client) throw new ValidationError([{ field: 'client-id', message: `no client ${clientId}` }]);
      const keys = new SigningKeys(pg, config.SECRET_KEY);
      await keys.load();
      const ctx = {
        pg,
        log: createLogger({ level: 'silent', name: 'cli' }),
        issuer: config.PUBLIC_BASE_URL,
        accessTokenTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
        keys,
        revocations: { publish: async () => undefined }, // issuing revokes nothing
      };
      const { granted, withheld } = grantableScopes(parsed.scopes, user.isOperator);
      if (withheld.length)
        printWarning(
          `scope ${withheld.join(' ')} withheld: ${email} is not an operator (accounts create --operator makes one); granted "${granted.join(' ')}"`,
          { requested: parsed.scopes.join(' '), granted: granted.join(' '), withheld: withheld.join(' ') },
        );
      return issueTokensForUser(ctx, user, client, granted);
    },
    { usesApi: true },
  );
}
