import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { CreatePortalSessionBody, PortalSessionSchema } from '../../../shared/api/portal.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { createPortalSession } from '../../domain/portal/sessions.js';
import { parseCreatePortalSession } from './input.js';

/**
 * POST /v1/portal_sessions — an operator (admin) makes a link that signs one customer into the portal without a
 * password: shown in this answer only (only its hash is stored), opened once, working PORTAL_SESSION_TTL_SECONDS.
 */
export function createPortalSessionRoute(deps: ApiDeps): RouteDef<CreatePortalSessionBody> {
  return {
    method: 'POST',
    path: '/v1/portal_sessions',
    auth: 'admin',
    input: parseCreatePortalSession,
    handler: async (ctx, body) => {
      const accountId = await accountActedFor(deps.pg, ctx.principal!, body.customer_id);
      const s = await createPortalSession(deps.pg, {
        baseUrl: deps.config.PUBLIC_BASE_URL,
        accountId,
        returnUrl: body.return_url,
        locale: body.locale ?? null,
        ttlSeconds: deps.config.PORTAL_SESSION_TTL_SECONDS,
        now: new Date(),
      });
      return reply.json(201, {
        id: s.id,
        customer_id: body.customer_id,
        url: s.url,
        return_url: body.return_url,
        locale: body.locale ?? null,
        expires_at: s.expires_at.toISOString(),
      });
    },
    doc: {
      summary:
        'A customer portal link for one customer (operators): shown once, opens once, expires after PORTAL_SESSION_TTL_SECONDS',
      tags: ['portal'],
      requestBody: CreatePortalSessionBody,
      responses: {
        '201': { description: 'the session and its link', schema: PortalSessionSchema },
        '422': problemResponse('no customer of the deployment, or return_url not an http(s) URL'),
      },
    },
  };
}
