import type { Infra } from '../../../shared/infra.js';
import { RoleService, type Component } from '../role.js';

/** billing role: period close, invoices, payment attempts and dunning. */
export function createBillingService(infra: Infra, components: Component[] = []): RoleService {
  return new RoleService('billing', infra, components);
}
