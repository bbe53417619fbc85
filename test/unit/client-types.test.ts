import t from 'tap';
import type Type from 'typebox';
import type * as Client from '../../shared/client/index.js';
import type { AcceptedUsageSchema, BatchResultSchema, MeterUsageRecordBody } from '../../shared/api/usage-records.js';
import type { MeterUsageSchema } from '../../shared/api/usage.js';
import type { CreateMeterBody, MeterSchema } from '../../shared/api/meters.js';

/**
 * `meterline/client` writes its types out (shared/client/types.ts) so that its package needs nothing of the
 * server. Each must be exactly what the server's schema accepts or answers: `npm run build` (tsc) fails on this
 * file when one drifts — a field added, removed, renamed, made optional or retyped on either side.
 */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Static<S> = S extends Type.TSchema ? Type.Static<S> : never;

const same: {
  UsageRecord: Same<Client.UsageRecord, Static<typeof MeterUsageRecordBody>>;
  AcceptedUsage: Same<Client.AcceptedUsage, Static<typeof AcceptedUsageSchema>>;
  BatchResult: Same<Client.BatchResult, Static<typeof BatchResultSchema>>;
  MeterUsage: Same<Client.MeterUsage, Static<typeof MeterUsageSchema>>;
  NewMeter: Same<Client.NewMeter, Static<typeof CreateMeterBody>>;
  Meter: Same<Client.Meter, Static<typeof MeterSchema>>;
} = { UsageRecord: true, AcceptedUsage: true, BatchResult: true, MeterUsage: true, NewMeter: true, Meter: true };

t.test('the client’s types are the server’s schemas (checked by tsc; listed here)', async (t) => {
  t.same(Object.keys(same), ['UsageRecord', 'AcceptedUsage', 'BatchResult', 'MeterUsage', 'NewMeter', 'Meter']);
  t.ok(Object.values(same).every((v) => v === true));
});
