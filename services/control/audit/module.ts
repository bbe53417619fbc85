import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import { purgeAuditEvents } from '../../domain/audit/store.js';
import { listAuditEventsRoute } from './list.js';

/**
 * /v1/audit_events, and the retention purge: audit events older than AUDIT_RETENTION_DAYS are deleted at start
 * and hourly (docs/audit.md). Several api processes may purge at once; the deletion is the same.
 */
export const auditModule: RouteModuleFactory = (deps) => {
  const purge = new PeriodicTask({
    name: 'purging audit events past their retention',
    everyMs: 60 * 60 * 1000,
    log: deps.log,
    run: () => purgeAuditEvents(deps.pg, deps.config.AUDIT_RETENTION_DAYS),
  });
  return {
    name: 'audit',
    area: 'control',
    async start() {
      void purge.start();
    },
    stop: () => purge.stop(),
    register(server) {
      server.route(listAuditEventsRoute(deps));
    },
  };
};
