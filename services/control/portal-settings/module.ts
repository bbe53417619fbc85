import type { ApiDeps, RouteDef, RouteModuleFactory } from '../../../shared/http/route.js';
import type { RequestContext } from '../../../shared/http/context.js';
import { reply } from '../../../shared/http/reply.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { PortalSettingsSchema, UpdatePortalSettingsBody } from '../../../shared/api/portal-settings.js';
import {
  changePortalSettings,
  readPortalSettings,
  type PortalSettings,
} from '../../domain/portal-settings/settings.js';

/** The API representation: every setting in effect, and when the operator last changed them. */
function toPortalSettings(s: { settings: PortalSettings; updatedAt: Date | null }) {
  return { ...s.settings, updated_at: s.updatedAt?.toISOString() ?? null };
}

const updateBody = bodyValidator<UpdatePortalSettingsBody>(UpdatePortalSettingsBody);

/**
 * GET /v1/portal_settings — any token: what the deployment's customers may do themselves (docs/operator-mode.md).
 * Customers read them so that their console and portal offer only what they may do; only an admin changes them.
 */
function getPortalSettingsRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/portal_settings',
    auth: 'read',
    handler: async () => reply.ok(toPortalSettings(await readPortalSettings(deps.pg))),
    doc: {
      summary: 'What the deployment’s customers may change themselves (portal settings)',
      tags: ['portal settings'],
      responses: { '200': { description: 'The settings in effect', schema: PortalSettingsSchema } },
    },
  };
}

/** PATCH /v1/portal_settings — admin: sets the settings given, the others keep their value. */
function updatePortalSettingsRoute(deps: ApiDeps): RouteDef<Partial<PortalSettings>> {
  return {
    method: 'PATCH',
    path: '/v1/portal_settings',
    auth: 'admin',
    input: (ctx: RequestContext) => updateBody.parse(ctx.body),
    handler: async (_ctx, change) => reply.ok(toPortalSettings(await changePortalSettings(deps.pg, change))),
    doc: {
      summary: 'Change portal settings (only the ones given)',
      tags: ['portal settings'],
      requestBody: UpdatePortalSettingsBody,
      responses: { '200': { description: 'The settings in effect after the change', schema: PortalSettingsSchema } },
    },
  };
}

/** /v1/portal_settings: the operator's deployment-level settings of what customers may do. */
export const portalSettingsModule: RouteModuleFactory = (deps) => ({
  name: 'portal-settings',
  area: 'control',
  register(server) {
    for (const route of [getPortalSettingsRoute, updatePortalSettingsRoute]) server.route(route(deps));
  },
});
