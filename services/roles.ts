import type { Service } from '../shared/service.js';
import type { Infra } from '../shared/infra.js';
import { ApiService } from './roles/api/service.js';
import { createAuthenticator } from './roles/api/authenticator.js';
import { createConsumerService } from './roles/consumer/service.js';
import { UsageConsumer } from './roles/consumer/usage-consumer.js';
import { createDispatcherService } from './roles/dispatcher/service.js';
import { createDispatcherParts } from './roles/dispatcher/components.js';
import { UsageEventEmitter } from './roles/consumer/usage-events.js';
import { createBillingService } from './roles/billing/service.js';
import { BillingScheduler } from './roles/billing/scheduler.js';
import { EntitlementEvaluator } from './roles/billing/entitlement-evaluator.js';
import { AlertEvaluator } from './roles/billing/alert-evaluator.js';
import { ExportRunner } from './roles/billing/export-runner.js';
import { registerConsumerLag } from '../shared/jetstream-lag.js';

import type { Role } from './role-names.js';

export { ROLES, type Role } from './role-names.js';

export async function createRole(role: Role, infra: Infra): Promise<Service> {
  switch (role) {
    case 'api':
      return new ApiService(infra, undefined, await createAuthenticator(infra));
    case 'consumer': {
      registerConsumerLag(infra.metrics, infra.nats, infra.natsNames.usageStream, infra.natsNames.usageConsumer);
      const usageEvents = new UsageEventEmitter(infra);
      return createConsumerService(infra, [
        usageEvents,
        new UsageConsumer(infra, { afterInsert: usageEvents.afterInsert }),
      ]);
    }
    case 'dispatcher':
      registerConsumerLag(infra.metrics, infra.nats, infra.natsNames.eventsStream, infra.natsNames.fanoutConsumer);
      return createDispatcherService(infra, createDispatcherParts(infra).components);
    case 'billing':
      return createBillingService(infra, [
        new BillingScheduler(infra),
        new EntitlementEvaluator(infra),
        new AlertEvaluator(infra),
        new ExportRunner(infra),
      ]);
  }
}
