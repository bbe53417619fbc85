import { connectNats, NatsNames } from '../../shared/clients/nats.js';
import { NotFoundError } from '../../shared/errors.js';
import {
  defaultLimits,
  LIMIT_NAMES,
  openLimitsBucket,
  readOverrides,
  writeOverrides,
  type LimitOverrides,
} from '../../shared/limits/account-limits.js';
import { withControlPlane } from './control-plane.js';
import { parseFlags, stringFlag, UsageError } from './output.js';
import { accountExists } from '../domain/accounts/store.js';

const FLAG_OF = (limit: string) => limit.replace(/_/g, '-');

/**
 * `meterline accounts limits --account ID [--ingest-records-per-second N] [--attributed-records-per-second N] [--requests-per-second N]
 * [--max-meters N] [--max-webhooks N] [--max-payment-methods N]`: sets the given overrides (alone: prints
 * them) → {account_id, limits (in force), overrides (the operator's), defaults}. Written to the NATS KV
 * limits bucket, which every api process watches: in force within milliseconds, no restart.
 */
export async function accountLimitsCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, { strings: ['account', ...LIMIT_NAMES.map(FLAG_OF)], required: ['account'] });
  const accountId = stringFlag(flags, 'account')!;
  const changes: LimitOverrides = {};
  for (const limit of LIMIT_NAMES) {
    const raw = flags[FLAG_OF(limit)];
    if (raw === undefined) continue;
    if (typeof raw !== 'string' || !/^[1-9][0-9]{0,9}$/.test(raw))
      throw new UsageError(`--${FLAG_OF(limit)} must be a positive integer`);
    changes[limit] = Number(raw);
  }
  return withControlPlane(async (pg, config) => {
    if (!(await accountExists(pg, accountId))) throw new NotFoundError(`No account ${accountId}.`);
    const nc = await connectNats(config.NATS_URL, 'meterline-cli-limits');
    try {
      const kv = await openLimitsBucket(nc, new NatsNames(config.NATS_NAMESPACE).limitsBucket);
      const overrides = Object.keys(changes).length
        ? await writeOverrides(kv, accountId, changes)
        : await readOverrides(kv, accountId);
      const defaults = defaultLimits(config);
      return { account_id: accountId, limits: { ...defaults, ...overrides }, overrides, defaults };
    } finally {
      await nc.close();
    }
  });
}
