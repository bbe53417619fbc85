import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { AlertSchema, CreateAlertBody } from '../../../shared/api/alerts.js';
import type { NewAlert } from '../../domain/alerts/types.js';
import { createAlert } from '../../domain/alerts/create.js';
import { parseNewAlert } from './input.js';
import { toAlert } from './representation.js';

/** POST /v1/alerts — a usage or spend alert on a customer (or, admin, every customer of a deployment meter). */
export function createAlertRoute(deps: ApiDeps): RouteDef<NewAlert> {
  return {
    method: 'POST',
    path: '/v1/alerts',
    auth: 'write',
    input: parseNewAlert,
    handler: async (ctx, alert) => {
      const row = await createAlert(deps.pg, ctx.principal!, alert, deps.config.ALERTS_MAX_PER_ACCOUNT);
      return reply.created(toAlert(row), `/v1/alerts/${row.id}`);
    },
    doc: {
      summary: 'Create a usage or spend alert: alert.triggered once per threshold and billing period',
      tags: ['alerts'],
      requestBody: CreateAlertBody,
      responses: {
        '201': { description: 'The alert (Location names it)', schema: AlertSchema },
        '409': problemResponse(
          'the customer has ALERTS_MAX_PER_ACCOUNT alerts already (`alert_limit_reached`; deployment-wide alerts count together)',
        ),
      },
    },
  };
}
