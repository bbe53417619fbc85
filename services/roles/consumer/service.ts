import type { Infra } from '../../../shared/infra.js';
import { RoleService, type Component } from '../role.js';

/** consumer role: USAGE stream → ClickHouse. Its components arrive with the ingestion pipeline. */
export function createConsumerService(infra: Infra, components: Component[] = []): RoleService {
  return new RoleService('consumer', infra, components);
}
