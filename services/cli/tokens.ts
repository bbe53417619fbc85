import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { grantableScopes, parseScopeParam } from '../../shared/auth/types.js';
import { NotFoundError, ValidationError } from '../../shared/errors.js';
import { createLogger } from '../../shared/logging.js';
import { findClient } from '../domain/accounts/clients-store.js';
import { findUserByEmail } from '../domain/accounts/users-store.js';
import { issueTokensForUser } from '../control/oauth/grants.js';
import { requireFlag, withControlPlane } from './control-plane.js';
import { parseFlags, UsageError } from './output.js';

/**
 * `meterline tokens issue --email E --client-id C --scope "read write"` → token response.
 * An operator tool (scripts, benchmarks): a grant without the browser, same scope rule as consent
 * (admin only for operator users), tokens signed by the same keys and revocable like any others.
 */
export async function tokensCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'issue') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
  const flags = parseFlags(rest, { strings: ['email', 'client-id', 'scope'] });
  const email = requireFlag(flags, 'email');
  const clientId = requireFlag(flags, 'client-id');
  const parsed = parseScopeParam(typeof flags.scope === 'string' ? flags.scope : 'read');
  if ('unknown' in parsed) throw new UsageError(`unknown scope "${parsed.unknown}" (use read, write, admin)`);
  if (!parsed.scopes.length) throw new UsageError('--scope must name at least one of read, write, admin');
  return withControlPlane(async (pg, config) => {
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
    return issueTokensForUser(ctx, user, client, grantableScopes(parsed.scopes, user.isOperator).granted);
  });
}
