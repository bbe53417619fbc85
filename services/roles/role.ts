import type { Service, HealthReport } from '../../shared/service.js';
import { once } from '../../shared/service.js';
import { probeDependencies, type Infra } from '../../shared/infra.js';

/** A background worker of one process role; its components start in order and stop in reverse. */
export interface Component {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  health?(): Promise<{ ok: boolean; detail?: string }>;
}

export class RoleService implements Service {
  private started: Component[] = [];

  constructor(
    readonly name: string,
    protected readonly infra: Infra,
    private readonly components: Component[],
  ) {}

  async start(): Promise<void> {
    for (const c of this.components) {
      await c.start();
      this.started.push(c);
    }
    this.infra.log.info({ components: this.components.map((c) => c.name) }, `${this.name} started`);
  }

  readonly stop = once(async () => {
    for (const c of this.started.reverse()) {
      await c.stop().catch((err) => this.infra.log.error({ err, component: c.name }, 'component stop failed'));
    }
    this.started = [];
  });

  async health(): Promise<HealthReport> {
    const report = await probeDependencies(this.infra);
    for (const c of this.components) {
      if (!c.health) continue;
      const h = await c.health();
      report.checks[c.name] = h;
      if (!h.ok) report.ok = false;
    }
    return report;
  }
}
