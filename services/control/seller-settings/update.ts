import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import type { RequestContext } from '../../../shared/http/context.js';
import { reply } from '../../../shared/http/reply.js';
import { SellerSettingsSchema, UpdateSellerSettingsBody } from '../../../shared/api/seller-settings.js';
import { changeSellerSettings, type SellerSettingsChange } from '../../domain/seller/settings-store.js';
import { parseSellerSettingsChange } from './input.js';
import { toSellerSettings } from './representation.js';

/** PATCH /v1/seller_settings — admin: sets the settings given (null clears one), the others keep their value. */
export function updateSellerSettingsRoute(deps: ApiDeps): RouteDef<SellerSettingsChange> {
  return {
    method: 'PATCH',
    path: '/v1/seller_settings',
    auth: 'admin',
    input: (ctx: RequestContext) => parseSellerSettingsChange(ctx),
    handler: async (_ctx, change) => reply.ok(toSellerSettings(await changeSellerSettings(deps.pg, change))),
    doc: {
      summary: 'Change seller settings (only the ones given; null clears one)',
      tags: ['seller settings'],
      requestBody: UpdateSellerSettingsBody,
      responses: { '200': { description: 'The settings after the change', schema: SellerSettingsSchema } },
    },
  };
}
