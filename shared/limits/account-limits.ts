import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '../clients/nats.js';
import type { Config } from '../config.js';
import type { Logger } from '../logging.js';

/** What one account may do: rates per second and quotas. */
export interface AccountLimits {
  ingest_records_per_second: number;
  /** An operator's emitter (admin token): records for its customers per second, all together (operator mode). */
  attributed_records_per_second: number;
  requests_per_second: number;
  max_meters: number;
  max_webhooks: number;
  max_payment_methods: number;
}

export const LIMIT_NAMES = [
  'ingest_records_per_second',
  'attributed_records_per_second',
  'requests_per_second',
  'max_meters',
  'max_webhooks',
  'max_payment_methods',
] as const;
export type LimitOverrides = Partial<AccountLimits>;

export function defaultLimits(config: Config): AccountLimits {
  return {
    ingest_records_per_second: config.LIMIT_INGEST_RECORDS_PER_SECOND,
    attributed_records_per_second: config.LIMIT_ATTRIBUTED_RECORDS_PER_SECOND,
    requests_per_second: config.LIMIT_REQUESTS_PER_SECOND,
    max_meters: config.LIMIT_MAX_METERS,
    max_webhooks: config.LIMIT_MAX_WEBHOOKS,
    max_payment_methods: config.LIMIT_MAX_PAYMENT_METHODS,
  };
}

function decodeOverrides(text: string): LimitOverrides {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const out: LimitOverrides = {};
  for (const k of LIMIT_NAMES) if (Number.isSafeInteger(raw[k]) && (raw[k] as number) > 0) out[k] = raw[k] as number;
  return out;
}

export async function openLimitsBucket(nc: NatsConnection, bucket: string): Promise<KV> {
  return new Kvm(nc).open(bucket);
}

/** An account's overrides as stored (the operator's settings only, without defaults). */
export async function readOverrides(kv: KV, accountId: string): Promise<LimitOverrides> {
  const e = await kv.get(accountId);
  return e && e.operation === 'PUT' ? decodeOverrides(e.string()) : {};
}

/** Merges `changes` into the account's stored overrides; every api process sees them through its watch. */
export async function writeOverrides(kv: KV, accountId: string, changes: LimitOverrides): Promise<LimitOverrides> {
  const merged = { ...(await readOverrides(kv, accountId)), ...changes };
  await kv.put(accountId, JSON.stringify(merged));
  return merged;
}

const RETRY_MS = 1_000;

/**
 * Every account's limits as this process sees them: defaults from config, overrides from the NATS KV
 * limits bucket kept in memory by a watch (no I/O per request). A watch that ends is re-opened; until it
 * has delivered the bucket again the process reports itself not ready (`health`), rather than serving
 * with limits it may no longer know.
 */
export class AccountLimitsBook {
  private overrides = new Map<string, LimitOverrides>();
  private synced = false;
  private stopped = false;
  private watcher: Awaited<ReturnType<KV['watch']>> | undefined;
  private retry: NodeJS.Timeout | undefined;
  readonly defaults: AccountLimits;

  constructor(
    private readonly nc: NatsConnection,
    private readonly bucket: string,
    config: Config,
    private readonly log?: Logger,
  ) {
    this.defaults = defaultLimits(config);
  }

  /** Resolves once the bucket's content is in memory. */
  async start(): Promise<void> {
    await this.open();
  }

  limits(accountId: string): AccountLimits {
    const o = this.overrides.get(accountId);
    return o ? { ...this.defaults, ...o } : this.defaults;
  }

  health(): { ok: boolean; detail?: string } {
    return this.synced
      ? { ok: true, detail: `${this.overrides.size} accounts with overrides` }
      : { ok: false, detail: 'account limits watch not established' };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.watcher?.stop();
  }

  private async open(): Promise<void> {
    const kv = await openLimitsBucket(this.nc, this.bucket);
    const next = new Map<string, LimitOverrides>();
    const pending = (await kv.status()).values;
    const watcher = await kv.watch();
    this.watcher = watcher;
    let markSynced!: () => void;
    const ready = new Promise<void>((resolve) => (markSynced = resolve));
    const publish = () => {
      this.overrides = next;
      this.synced = true;
      markSynced();
    };
    if (pending === 0) publish();
    void (async () => {
      try {
        for await (const e of watcher) {
          try {
            if (e.operation === 'PUT') next.set(e.key, decodeOverrides(e.string()));
            else next.delete(e.key);
          } catch {
            next.delete(e.key);
          }
          if (e.isUpdate || e.delta === 0) publish();
        }
      } catch (err) {
        this.log?.error({ err }, 'account limits watch failed');
      }
      if (this.stopped) return;
      // The watch ended (NATS restarted, the consumer was lost): not ready until it is re-established.
      this.synced = false;
      this.log?.warn('account limits watch ended; re-opening');
      this.reopen();
    })();
    await ready;
  }

  private reopen(): void {
    this.retry = setTimeout(() => {
      if (this.stopped) return;
      this.open().catch((err) => {
        this.log?.warn({ err: (err as Error).message }, 'account limits watch: re-open failed');
        this.reopen();
      });
    }, RETRY_MS);
    this.retry.unref();
  }
}
