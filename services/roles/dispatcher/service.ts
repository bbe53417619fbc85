import type { Infra } from '../../../shared/infra.js';
import { RoleService, type Component } from '../role.js';

/** dispatcher role: outbox relay (Postgres → EVENTS), webhook delivery and invoice emails. */
export function createDispatcherService(infra: Infra, components: Component[] = []): RoleService {
  return new RoleService('dispatcher', infra, components);
}
