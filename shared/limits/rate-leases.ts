import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '../clients/nats.js';

/**
 * The cluster-wide half of a per-account rate (docs/limits.md, "Limits across processes"): one token bucket
 * per (policy, account) in a NATS KV bucket, `{t: tokens, at: epoch ms}`, refilled at the limit's rate up to
 * one window's worth. Api processes take tokens from it in leases, by compare-and-set, and spend them locally
 * without I/O. Every token any process spends came out of this bucket, so all processes together never admit
 * more than the limit plus one window's burst (plus what they held leased ahead when the interval began: see
 * rate-limiter.ts), however many they are and however the traffic is spread — and one process alone may lease
 * all of it.
 */
export interface BucketShape {
  /** Tokens when full: one window's worth (the limit). */
  capacity: number;
  /** Refill per millisecond. */
  perMs: number;
}

/** A lease: admitted when the shared bucket holds `need`; then `take` (maybe more than it holds: debt) plus up to `extra`. */
export interface LeaseRequest {
  need: number;
  take: number;
  extra: number;
}

export interface LeaseResult {
  /** Tokens granted to this process (0: refused, nothing taken). */
  granted: number;
  /** Tokens the shared bucket holds after the lease (negative: in debt). */
  left: number;
  /** When (epoch ms) `left` was true. */
  at: number;
}

interface SharedState {
  t: number;
  at: number;
}

/** The tokens of a shared bucket at `now` (an absent entry is a full bucket: it expired long after refilling). */
export function refilled(state: SharedState | undefined, shape: BucketShape, now: number): number {
  if (!state) return shape.capacity;
  return Math.min(shape.capacity, state.t + Math.max(0, now - state.at) * shape.perMs);
}

/**
 * How many tokens a lease gets from a bucket holding `available`: nothing below `need`; else `take` — which
 * may exceed what is there (one request larger than the whole bucket passes when the bucket is full and
 * leaves it in debt) — plus up to `extra` of what remains.
 */
export function grantFrom(available: number, r: LeaseRequest): number {
  if (available < r.need) return 0;
  return r.take + Math.min(r.extra, Math.max(0, available - r.take));
}

/**
 * A compare-and-set that lost to another process reads and tries again, for up to this long: losing means the
 * other one's write went through, so under contention every round still makes progress. A fixed number of
 * attempts ran out on a loaded machine with sixteen emitters over two processes, and the process then enforced
 * alone, on top of the shared bucket (docs/limits.md, "NATS unreachable").
 */
const CAS_DEADLINE_MS = 10_000;

function isConflict(err: unknown): boolean {
  const e = err as { code?: number; message?: string };
  return e.code === 10071 || e.code === 10164 || /wrong last sequence/i.test(e.message ?? '');
}

function decode(text: string): SharedState | undefined {
  try {
    const v = JSON.parse(text) as SharedState;
    return Number.isFinite(v.t) && Number.isFinite(v.at) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A shared bucket's entry as this process last read or wrote it. */
interface KnownEntry {
  revision: number;
  /** undefined: deleted or unreadable, a full bucket. */
  state: SharedState | undefined;
}

export class RateLeases {
  private connected = true;
  /**
   * Each bucket's entry as this process last wrote it: the next lease writes on top of it with no read first
   * (one KV request, not two). When another process wrote since, the write's revision check fails and the
   * entry is read again. A refusal computed from it needs no request at all: tokens only ever leave a shared
   * bucket (nothing is given back), so the real one holds at most what this entry refills to.
   */
  private readonly known = new Map<string, KnownEntry>();

  constructor(
    private readonly kv: KV,
    nc?: NatsConnection,
  ) {
    if (nc) void this.watch(nc);
  }

  static async open(nc: NatsConnection, bucket: string): Promise<RateLeases> {
    return new RateLeases(await new Kvm(nc).open(bucket), nc);
  }

  /** Whether the connection to NATS is up now (a lease may still be slow: a loaded server or machine). */
  get reachable(): boolean {
    return this.connected;
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'staleConnection' || s.type === 'close') this.connected = false;
      else if (s.type === 'reconnect') this.connected = true;
    }
    this.connected = false;
  }

  /**
   * Takes a lease from the shared bucket `key` by compare-and-set; throws when NATS can't be asked. A bucket
   * this process never saw is first tried as a conditional create (an absent entry is a full bucket).
   */
  async lease(key: string, shape: BucketShape, request: LeaseRequest): Promise<LeaseResult> {
    const deadline = Date.now() + CAS_DEADLINE_MS;
    let entry = this.known.get(key);
    for (;;) {
      const now = Date.now();
      const available = refilled(entry?.state, shape, now);
      const granted = grantFrom(available, request);
      if (granted === 0) return { granted: 0, left: available, at: now };
      const state: SharedState = { t: available - granted, at: now };
      const text = JSON.stringify(state);
      try {
        const revision = entry ? await this.kv.update(key, text, entry.revision) : await this.kv.create(key, text);
        this.known.set(key, { revision, state });
        return { granted, left: state.t, at: now };
      } catch (err) {
        // Another process changed the bucket since this one last wrote it (or created it first): read it again.
        if (!isConflict(err) || Date.now() > deadline) throw err;
        entry = await this.read(key);
      }
    }
  }

  /** Forgets what this process knew of bucket `key` (idle long enough to have refilled). */
  forget(key: string): void {
    this.known.delete(key);
  }

  private async read(key: string): Promise<KnownEntry | undefined> {
    const e = await this.kv.get(key);
    if (!e) {
      this.known.delete(key);
      return undefined;
    }
    const entry = { revision: e.revision, state: e.operation === 'PUT' ? decode(e.string()) : undefined };
    this.known.set(key, entry);
    return entry;
  }
}
