import type { Service, HealthReport } from '../../../shared/service.js';
import { once } from '../../../shared/service.js';
import { HttpServer } from '../../../shared/http/server.js';
import { probeDependencies, type Infra, type ServerName } from '../../../shared/infra.js';
import type { Authenticator } from '../../../shared/auth/types.js';
import { UnauthorizedError } from '../../../shared/errors.js';
import { registerSystemRoutes } from './system-routes.js';
import type { ApiDeps, RouteModule, RouteModuleFactory } from '../../../shared/http/route.js';
import { apiPipeline } from './pipeline.js';
import { AccountProtection } from '../../../shared/limits/protection.js';
import { ROUTE_MODULES } from './route-modules.js';
import { ReadCaches } from '../../../shared/read-cache.js';
import { createPgPool, type PgPool } from '../../../shared/clients/postgres.js';
import { readCacheVersions } from '../../domain/read-cache/store.js';

const READINESS_TTL_MS = 1_000;

const NO_AUTH: Authenticator = {
  authenticate() {
    throw new UnauthorizedError('Token verification is not configured.');
  },
};

/** The uWebSockets.js app: ingress and control-plane routes on one port. */
export class ApiService implements Service {
  readonly name = 'api';
  readonly server: HttpServer;
  readonly protection: AccountProtection;
  readonly reads: ReadCaches;
  private readonly versionsPool: PgPool;
  private modules: RouteModule[] = [];
  private started = false;
  private readiness: { at: number; report: Promise<HealthReport> } | undefined;

  constructor(
    private readonly infra: Infra,
    private readonly factories: RouteModuleFactory[] = ROUTE_MODULES,
    private readonly authenticator: Authenticator = NO_AUTH,
  ) {
    this.protection = new AccountProtection(infra);
    // Its own connection: a poll queued behind the reads a busy pool holds would let the caches go stale, and
    // every read then go to Postgres — the pool's queue growing further (a cache that never comes back).
    this.versionsPool = createPgPool(infra.config.DATABASE_URL, 1);
    this.reads = new ReadCaches(() => readCacheVersions(this.versionsPool), infra);
    this.server = new HttpServer({
      host: infra.config.HOST,
      port: infra.config.PORT,
      log: infra.log,
      metrics: infra.metrics,
      pipeline: apiPipeline(infra, authenticator, this.protection, this.reads),
      maxBufferedBodyBytes: infra.config.MAX_BUFFERED_REQUEST_BYTES,
      maxBufferedBodyBytesPerCaller: infra.config.MAX_BUFFERED_REQUEST_BYTES_PER_CALLER,
      bodyReadTimeoutMs: infra.config.BODY_READ_TIMEOUT_SECONDS * 1000,
      trustedProxies: infra.config.TRUSTED_PROXIES,
      verifiedAccount: authenticator.verifiedAccount?.bind(authenticator),
    });
  }

  get port(): number {
    return this.server.port;
  }

  async start(): Promise<void> {
    const deps: ApiDeps = {
      ...this.infra,
      authenticator: this.authenticator,
      protection: this.protection,
      bodyBudget: this.server.bodyBudget,
      reads: this.reads,
    };
    await this.protection.start();
    await this.reads.start();
    registerSystemRoutes(this.server, { metrics: this.infra.metrics, readiness: () => this.health() });
    const wanted = this.infra.config.API_ROUTES;
    for (const factory of this.factories) {
      const mod = await factory(deps);
      if (wanted !== 'all' && mod.area !== wanted) continue;
      this.modules.push(mod);
    }
    for (const mod of this.modules) await mod.start?.();
    for (const mod of this.modules) mod.register(this.server);
    await this.server.listen();
    this.started = true;
    this.infra.log.info({ port: this.server.port, modules: this.modules.map((m) => m.name) }, 'api listening');
  }

  readonly stop = once(async () => {
    // Ingress first: no new connections; the requests in flight finish with their answer (a committed write
    // is never reported as a reset), up to SHUTDOWN_DRAIN_SECONDS; then modules flush (publishes, watches).
    this.server.closeListener();
    const drained = await this.server.drain(this.infra.config.SHUTDOWN_DRAIN_SECONDS * 1000);
    if (!drained)
      this.infra.log.warn(
        { in_flight: this.server.requestsInFlight },
        'shutdown: requests still in flight after the drain deadline; closing',
      );
    for (const mod of [...this.modules].reverse())
      await mod.stop?.().catch((err) => this.infra.log.error({ err, module: mod.name }, 'module stop failed'));
    this.server.closeAll();
    await this.protection.stop();
    await this.reads.stop();
    await this.versionsPool.end().catch(() => undefined);
    this.started = false;
  });

  /**
   * Readiness. The servers that count are the ones this process's routes can't serve without: ingress
   * needs only NATS; the control plane needs Postgres and NATS (meter registry), and ClickHouse only for
   * usage queries — which answer 503 on their own — so a ClickHouse outage doesn't pull ingest (or the
   * rest of the control plane) out of a load balancer. One probe serves every caller for READINESS_TTL_MS:
   * /readyz is unauthenticated and must not turn into a probe of every server per hit.
   */
  health(): Promise<HealthReport> {
    if (!this.readiness || Date.now() - this.readiness.at > READINESS_TTL_MS)
      this.readiness = { at: Date.now(), report: this.probe() };
    return this.readiness.report;
  }

  private async probe(): Promise<HealthReport> {
    const required: ServerName[] = this.infra.config.API_ROUTES === 'ingress' ? ['nats'] : ['postgres', 'nats'];
    const report = await probeDependencies(this.infra, required);
    const limits = this.protection.health();
    report.checks['account-limits'] = limits;
    if (!limits.ok) report.ok = false;
    const tokens = this.authenticator.health?.();
    if (tokens) {
      report.checks['revocations'] = tokens;
      if (!tokens.ok) report.ok = false;
    }
    for (const mod of this.modules) {
      if (!mod.health) continue;
      const h = await mod.health();
      report.checks[mod.name] = h;
      if (!h.ok) report.ok = false;
    }
    if (!this.started) report.ok = false;
    return report;
  }
}
