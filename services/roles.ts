import type { Service } from '../shared/service.js';
import type { Infra } from '../shared/infra.js';
import { registerConsumerLag } from '../shared/jetstream-lag.js';

import type { Role } from './role-names.js';

export { ROLES, type Role } from './role-names.js';

/**
 * Each role imports only its own code: a process loads one role's modules, not all four (the api's routes were
 * most of every role's start-up CPU — and a restart's on a busy host).
 */
export async function createRole(role: Role, infra: Infra): Promise<Service> {
  switch (role) {
    case 'api': {
      const [{ ApiService }, { createAuthenticator }] = await Promise.all([
        import('./roles/api/service.js'),
        import('./roles/api/authenticator.js'),
      ]);
      return new ApiService(infra, undefined, await createAuthenticator(infra));
    }
    case 'consumer': {
      const [{ createConsumerService }, { UsageConsumer }, { UsageEventEmitter }] = await Promise.all([
        import('./roles/consumer/service.js'),
        import('./roles/consumer/usage-consumer.js'),
        import('./roles/consumer/usage-events.js'),
      ]);
      registerConsumerLag(infra.metrics, infra.nats, infra.natsNames.usageStream, infra.natsNames.usageConsumer);
      const usageEvents = new UsageEventEmitter(infra);
      return createConsumerService(infra, [
        usageEvents,
        new UsageConsumer(infra, { afterInsert: usageEvents.afterInsert }),
      ]);
    }
    case 'dispatcher': {
      const [{ createDispatcherService }, { createDispatcherParts }] = await Promise.all([
        import('./roles/dispatcher/service.js'),
        import('./roles/dispatcher/components.js'),
      ]);
      registerConsumerLag(infra.metrics, infra.nats, infra.natsNames.eventsStream, infra.natsNames.fanoutConsumer);
      return createDispatcherService(infra, createDispatcherParts(infra).components);
    }
    case 'billing': {
      const [
        { createBillingService },
        { BillingScheduler },
        { EntitlementEvaluator },
        { AlertEvaluator },
        { ExportRunner },
      ] = await Promise.all([
        import('./roles/billing/service.js'),
        import('./roles/billing/scheduler.js'),
        import('./roles/billing/entitlement-evaluator.js'),
        import('./roles/billing/alert-evaluator.js'),
        import('./roles/billing/export-runner.js'),
      ]);
      return createBillingService(infra, [
        new BillingScheduler(infra),
        new EntitlementEvaluator(infra),
        new AlertEvaluator(infra),
        new ExportRunner(infra),
      ]);
    }
  }
}
