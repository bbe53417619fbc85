import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { requireScope } from '../../../shared/auth/types.js';
import { CreateMeterBody, MeterSchema } from '../../../shared/api/meters.js';
import { toMeter } from './representation.js';
import type { NewMeter } from '../../domain/meters/types.js';
import { parseNewMeter } from './input.js';
import { createMeter } from '../../domain/meters/store.js';
import type { MeterRegistryWriter } from '../../domain/meters/registry.js';

/** POST /v1/meters — 201 + Location once Postgres and the KV registry both hold the meter. */
export function createMeterRoute(
  deps: ApiDeps,
  registry: () => MeterRegistryWriter,
  registerUnique: (accountId: string, meterId: string, uniqueBy: string) => Promise<void>,
): RouteDef<NewMeter> {
  return {
    method: 'POST',
    path: '/v1/meters',
    auth: 'write',
    input: parseNewMeter,
    handler: async (ctx, meter) => {
      // A deployment meter is every customer's: only an operator makes one.
      if (meter.scope === 'deployment') requireScope(ctx.principal!, 'admin');
      const accountId = ctx.principal!.accountId;
      const row = await createMeter(
        deps.pg,
        registry(),
        accountId,
        meter,
        deps.protection.limits(accountId).max_meters,
        (meterId, uniqueBy) => registerUnique(accountId, meterId, uniqueBy),
      );
      return reply.created(toMeter(row), `/v1/meters/${row.id}`);
    },
    doc: {
      summary: 'Create a meter (scope deployment: admin only, one meter for every customer)',
      tags: ['meters'],
      requestBody: CreateMeterBody,
      responses: {
        '201': { description: 'The created meter, usable by every ingress (Location names it)', schema: MeterSchema },
      },
    },
  };
}
