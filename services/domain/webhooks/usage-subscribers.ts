import { Kvm, type KV } from '@nats-io/kv';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import type { NatsConnection, NatsNames } from '../../../shared/clients/nats.js';
import type { Logger } from '../../../shared/logging.js';
import { accountsWithEnabledSubscribers, hasEnabledSubscriber, lockUsageSubscriberSync } from './store.js';

/**
 * `meter.usage.recorded` is produced only for accounts with an enabled webhook subscribed to it, and the
 * usage consumer must learn that without asking Postgres per record: the set of such accounts lives in a
 * NATS KV bucket (key = account id), replicated into each consumer's memory (services/roles/consumer/usage-events.ts).
 *
 * Written after every change that can alter it (webhook create, update, delete, a 410 disabling one) and
 * reconciled by the dispatcher every minute. Each sync reads the account's committed state under a per-account
 * advisory lock, so of two concurrent syncs the later one sees both changes and its write is the last.
 */
export const USAGE_EVENT_TYPE = 'meter.usage.recorded';
/**
 * The bucket's key for "an enabled deployment webhook is subscribed" (operator mode): every account's usage then
 * produces events. Never an account id.
 */
export const DEPLOYMENT_SUBSCRIBER = '_deployment';

const buckets = new WeakMap<NatsConnection, Promise<KV>>();

function bucketOf(nats: NatsConnection, names: NatsNames): Promise<KV> {
  let kv = buckets.get(nats);
  if (!kv) {
    kv = new Kvm(nats).open(names.webhookUsageBucket);
    kv.catch(() => buckets.delete(nats));
    buckets.set(nats, kv);
  }
  return kv;
}

export interface UsageSubscriberDeps {
  pg: PgPool;
  nats: NatsConnection;
  natsNames: NatsNames;
  log: Logger;
}

/** `accountId`: an account, or DEPLOYMENT_SUBSCRIBER for the deployment webhooks. */
export async function syncUsageSubscriber(deps: UsageSubscriberDeps, accountId: string): Promise<void> {
  const kv = await bucketOf(deps.nats, deps.natsNames);
  await withTransaction(deps.pg, async (c) => {
    await lockUsageSubscriberSync(c, accountId);
    if (await hasEnabledSubscriber(c, accountId, USAGE_EVENT_TYPE, DEPLOYMENT_SUBSCRIBER)) await kv.put(accountId, '1');
    else await kv.delete(accountId);
  });
}

/**
 * For the routes: a failed sync never fails the request (the change is committed); the dispatcher's
 * reconciliation repairs the bucket within a minute.
 */
export async function syncUsageSubscriberQuietly(deps: UsageSubscriberDeps, accountId: string): Promise<void> {
  // The account's own entry, and the deployment's (the changed webhook may have been a deployment webhook).
  await Promise.all([syncUsageSubscriber(deps, accountId), syncUsageSubscriber(deps, DEPLOYMENT_SUBSCRIBER)]).catch(
    (err) =>
      deps.log.warn(
        { err, account: accountId },
        'webhook usage subscribers: sync failed; reconciliation will repair it',
      ),
  );
}

/** Brings the bucket in line with Postgres: every account that differs is synced. Returns how many did. */
export async function reconcileUsageSubscribers(deps: UsageSubscriberDeps): Promise<number> {
  const kv = await bucketOf(deps.nats, deps.natsNames);
  const wanted = new Set(await accountsWithEnabledSubscribers(deps.pg, USAGE_EVENT_TYPE, DEPLOYMENT_SUBSCRIBER));
  const present = new Set<string>();
  for await (const k of await kv.keys()) present.add(k);
  const differing = [...wanted].filter((a) => !present.has(a)).concat([...present].filter((a) => !wanted.has(a)));
  for (const a of differing) await syncUsageSubscriber(deps, a);
  return differing.length;
}
