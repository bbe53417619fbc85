import { hostname } from 'node:os';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '../clients/nats.js';
import type { Logger } from '../logging.js';
import { PeriodicTask } from '../periodic.js';

/**
 * How many api processes are alive: each puts a heartbeat into a KV bucket whose entries expire
 * (API_PROCESS_TTL_MS), and counts the keys. Until the first count, and when NATS can't be asked, the last
 * known count stands (1 at first: the process alone).
 */
export class ProcessCount {
  private count = 1;
  private task: PeriodicTask | undefined;
  private kv: KV | undefined;
  private readonly id = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    private readonly nc: NatsConnection,
    private readonly bucket: string,
    private readonly intervalMs: number,
    private readonly log?: Logger,
  ) {}

  get share(): number {
    return 1 / this.count;
  }

  get processes(): number {
    return this.count;
  }

  async start(): Promise<void> {
    this.kv = await new Kvm(this.nc).open(this.bucket);
    // beat() reports its own failures: the task only times it.
    this.task = new PeriodicTask({ name: 'api process heartbeat', everyMs: this.intervalMs, run: () => this.beat() });
    await this.task.start();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    await this.kv?.delete(this.id).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    try {
      await this.kv!.put(this.id, String(Date.now()));
      let n = 0;
      for await (const _ of await this.kv!.keys()) n++;
      this.count = Math.max(1, n);
    } catch (err) {
      this.log?.warn({ err: (err as Error).message }, 'api process heartbeat failed; keeping the last process count');
    }
  }
}
