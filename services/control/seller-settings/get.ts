import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { SellerSettingsSchema } from '../../../shared/api/seller-settings.js';
import { readSellerSettings } from '../../domain/seller/settings-store.js';
import { toSellerSettings } from './representation.js';

/** GET /v1/seller_settings — admin: who issues the deployment's documents and emails (docs/seller-settings.md). */
export function getSellerSettingsRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/seller_settings',
    auth: 'admin',
    handler: async () => reply.ok(toSellerSettings(await readSellerSettings(deps.pg))),
    doc: {
      summary: 'The seller and branding on invoices, credit notes and emails (seller settings)',
      tags: ['seller settings'],
      responses: { '200': { description: 'The settings as set', schema: SellerSettingsSchema } },
    },
  };
}
