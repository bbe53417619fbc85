import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '../clients/nats.js';
import type { NatsNames } from '../clients/nats.js';
import type { Logger } from '../logging.js';
import {
  DEPLOYMENT_KEY_OWNER,
  decodeMeter,
  isMeterId,
  isMeterKeyEntry,
  meterKeyEntry,
  meterKeyOwner,
  type MeterRecord,
} from './record.js';
import { KvMirror } from '../kv-mirror.js';
import { UnavailableError } from '../errors.js';

const MAX_ID_LENGTH = 64;
const nameKey = (accountId: string, name: string) => `${accountId}\u0000${name}`;
const keyIndex = (owner: string, key: string) => `${owner}\u0000${key}`;
/** Deployment meters are every account's: their names are indexed under this (never an account id). */
const DEPLOYMENT = '\u0001deployment';
/** Bucket reads one request may cause: a batch naming 1,000 made-up meter ids must not cost 1,000 (or 100) NATS round trips. */
const MAX_LOOKUPS = 10;
const MAX_ABSENT = 10_000;
const ABSENT_TTL_MS = 1_000;

/**
 * Every meter, replicated into memory from the NATS KV meter bucket by a watch: the ingress looks meters
 * up without a network hop, and a create or a deactivation reaches every ingress within milliseconds of the
 * control plane writing the bucket. start() resolves once the bucket's current content is loaded, so an
 * api never listens with an empty registry.
 */
export class MeterRegistry {
  private readonly meters = new Map<string, MeterRecord>();
  /** account + name → meter ids (names are not unique). */
  private readonly byNames = new Map<string, Set<string>>();
  /** owner + key → meter id (keys are unique per owner: meterKeyOwner). */
  private readonly byKeys = new Map<string, string>();
  private mirror: KvMirror | undefined;
  private ready = false;
  private kv: KV | undefined;
  /** Ids looked up in the bucket and not found, until when: bounds the reads a flood of unknown ids costs. */
  private readonly absent = new Map<string, number>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: NatsNames,
    private readonly log: Logger,
    /** How long the copy may go unconfirmed (the watch lost) before ingest answers 503 (WATCH_MAX_STALENESS_SECONDS). */
    private readonly maxStalenessMs = 10_000,
  ) {}

  get size(): number {
    return this.meters.size;
  }

  get isReady(): boolean {
    return this.ready;
  }

  /**
   * 503 unless the registry is known current: a deactivation the process may have missed must not let usage
   * through (fail closed); the watch is being re-established meanwhile.
   */
  assertCurrent(): void {
    if (!this.mirror?.fresh)
      throw new UnavailableError('The meter registry cannot be confirmed current right now; retry shortly.', 2);
  }

  health(): { ok: boolean; detail?: string } {
    if (!this.ready) return { ok: false, detail: 'meter registry not loaded' };
    return this.mirror?.health() ?? { ok: false, detail: 'meter registry not started' };
  }

  get(id: string): MeterRecord | undefined {
    return this.meters.get(id);
  }

  /**
   * The meter a record or path names for `accountId`: by id (`mtr_…`), else by key — the account's own meter of
   * that key first, then the deployment's. Whether the account may use it is the caller's check (meterUsableBy).
   */
  resolve(accountId: string, ref: string): MeterRecord | undefined {
    if (isMeterId(ref)) return this.meters.get(ref);
    const id = this.byKeys.get(keyIndex(accountId, ref)) ?? this.byKeys.get(keyIndex(DEPLOYMENT_KEY_OWNER, ref));
    return id === undefined ? undefined : this.meters.get(id);
  }

  /** ensure() for references that may be keys: a key this process has not indexed yet is read from its bucket entry. */
  async ensureRefs(accountId: string, refs: Iterable<string>): Promise<void> {
    const ids: string[] = [];
    const keys: string[] = [];
    for (const ref of refs) {
      if (isMeterId(ref)) ids.push(ref);
      else if (this.resolve(accountId, ref) === undefined && keys.length < MAX_LOOKUPS) keys.push(ref);
    }
    const kv = this.kv;
    if (keys.length && kv) {
      const entries = keys.flatMap((k) => [meterKeyEntry(accountId, k), meterKeyEntry(DEPLOYMENT_KEY_OWNER, k)]);
      const now = Date.now();
      await Promise.all(
        entries.map(async (entry) => {
          if ((this.absent.get(entry) ?? 0) > now) return;
          try {
            const e = await kv.get(entry);
            if (e && e.operation === 'PUT') return void ids.push(e.string());
          } catch {
            // not a valid key, or NATS is unreachable: answer from what the registry holds
          }
          if (this.absent.size >= MAX_ABSENT) this.absent.clear();
          this.absent.set(entry, now + ABSENT_TTL_MS);
        }),
      );
    }
    await this.ensure(ids);
  }

  /**
   * The account's meter of that name (CloudEvents `type`), else the deployment meter of that name: undefined
   * when none, 'ambiguous' when several meters share it (names need not be unique; the caller must then use the id).
   */
  byName(accountId: string, name: string): MeterRecord | 'ambiguous' | undefined {
    const own = this.named(nameKey(accountId, name));
    return own ?? this.named(nameKey(DEPLOYMENT, name));
  }

  private named(key: string): MeterRecord | 'ambiguous' | undefined {
    const ids = this.byNames.get(key);
    if (!ids || ids.size === 0) return undefined;
    if (ids.size > 1) return 'ambiguous';
    return this.meters.get(ids.values().next().value!);
  }

  private index(m: MeterRecord | undefined, add: boolean): void {
    if (m?.key) {
      const k = keyIndex(meterKeyOwner(m), m.key);
      if (add) this.byKeys.set(k, m.id);
      else if (this.byKeys.get(k) === m.id) this.byKeys.delete(k);
    }
    if (!m?.name) return;
    const k = nameKey(m.scope === 'deployment' ? DEPLOYMENT : m.account_id, m.name);
    let ids = this.byNames.get(k);
    if (add) {
      if (!ids) this.byNames.set(k, (ids = new Set()));
      ids.add(m.id);
    } else if (ids) {
      ids.delete(m.id);
      if (ids.size === 0) this.byNames.delete(k);
    }
  }

  private put(m: MeterRecord): void {
    this.index(this.meters.get(m.id), false);
    this.meters.set(m.id, m);
    this.index(m, true);
  }

  /**
   * The control plane puts a meter in the bucket before it answers 201, but the watch may deliver it a few
   * milliseconds later: ids the registry doesn't know are read from the bucket directly before anyone gets a
   * 404, so a meter is usable by every ingress as soon as its 201 is sent.
   */
  async ensure(ids: Iterable<string>): Promise<void> {
    const now = Date.now();
    const wanted: string[] = [];
    for (const id of ids) {
      if (this.meters.has(id) || id.length > MAX_ID_LENGTH || (this.absent.get(id) ?? 0) > now) continue;
      wanted.push(id);
      if (wanted.length === MAX_LOOKUPS) break;
    }
    const kv = this.kv;
    if (wanted.length === 0 || !kv) return;
    await Promise.all(
      wanted.map(async (id) => {
        try {
          const e = await kv.get(id);
          const m = e && e.operation === 'PUT' ? decodeMeter(e.string()) : null;
          if (m && m.id === id) {
            if (!this.meters.has(id)) this.put(m);
            return;
          }
        } catch {
          // not a valid key, or NATS is unreachable: answer from what the registry holds
        }
        if (this.absent.size >= MAX_ABSENT) this.absent.clear();
        this.absent.set(id, now + ABSENT_TTL_MS);
      }),
    );
  }

  async start(timeoutMs = 30_000): Promise<void> {
    this.kv = await new Kvm(this.nc).open(this.names.meterBucket);
    this.mirror = new KvMirror(this.nc, this.names.meterBucket, {
      name: 'meter registry',
      apply: (e) => this.apply(e),
      maxStalenessMs: this.maxStalenessMs,
      log: this.log,
    });
    await this.mirror.start(timeoutMs);
    this.ready = true;
    this.log.info({ meters: this.meters.size }, 'meter registry loaded');
  }

  private apply(e: KvWatchEntry): void {
    // A key's entry only points at its meter, whose own record carries the key: nothing to hold.
    if (isMeterKeyEntry(e.key)) return;
    if (e.operation !== 'PUT') {
      this.index(this.meters.get(e.key), false);
      this.meters.delete(e.key);
      return;
    }
    this.absent.delete(e.key);
    const m = decodeMeter(e.string());
    if (!m || m.id !== e.key) {
      this.log.warn({ key: e.key }, 'meter registry: ignoring an undecodable entry');
      return;
    }
    this.put(m);
  }

  async stop(): Promise<void> {
    await this.mirror?.stop();
  }
}
