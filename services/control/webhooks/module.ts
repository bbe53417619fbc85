import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createWebhookRoute } from './create.js';
import { listWebhooksRoute } from './list.js';
import { getWebhookRoute } from './get.js';
import { updateWebhookRoute } from './update.js';
import { deleteWebhookRoute } from './delete.js';
import { listDeliveriesRoute } from './deliveries.js';
import { retryDeliveryRoute } from './retry-delivery.js';
import { rotateSecretRoute } from './rotate-secret.js';

/** /v1/webhooks: registrations (CRUD) and their delivery attempts. Delivery itself is the dispatcher's. */
export const webhooksModule: RouteModuleFactory = (deps) => ({
  name: 'webhooks',
  area: 'control',
  register(server) {
    server.route(createWebhookRoute(deps));
    server.route(listWebhooksRoute(deps));
    server.route(getWebhookRoute(deps));
    server.route(updateWebhookRoute(deps));
    server.route(deleteWebhookRoute(deps));
    server.route(listDeliveriesRoute(deps));
    server.route(retryDeliveryRoute(deps));
    server.route(rotateSecretRoute(deps));
  },
});
