import t from 'tap';
import { Kvm } from '@nats-io/kv';
import { isolatedConfig, testInfra } from '../fixtures/env.js';
import { MeterRegistry } from '../../shared/meters/registry.js';
import { putMeter, type MeterRecord } from '../../shared/meters/record.js';

// A meter must be usable by every ingress as soon as its 201 is sent, even when the KV watch has not
// delivered it yet: the registry reads unknown ids from the bucket before anyone answers 404.
t.test('meters the watch has not delivered are read from the bucket', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const registry = new MeterRegistry(infra.nats, infra.natsNames, infra.log);
  await registry.start();
  await registry.stop(); // freeze the watch: from here on, only ensure() can learn about new meters

  const kv = await new Kvm(infra.nats).open(infra.natsNames.meterBucket);
  const meter: MeterRecord = {
    id: 'mtr_lateWatch',
    account_id: 'acct_a',
    type: 'counter',
    aggregation: 'sum',
    status: 'active',
    updated_at_ms: Date.now(),
  };
  await putMeter(kv, meter);
  t.equal(registry.get(meter.id), undefined, 'the frozen watch did not deliver it');

  await registry.ensure([meter.id]);
  t.same(registry.get(meter.id), meter, 'read straight from the bucket');

  await registry.ensure(['mtr_doesNotExist', 'not a valid kv key!']);
  t.equal(registry.get('mtr_doesNotExist'), undefined, 'an unknown id stays unknown');
  const late: MeterRecord = { ...meter, id: 'mtr_doesNotExist' };
  await putMeter(kv, late);
  await registry.ensure(['mtr_doesNotExist']);
  t.equal(
    registry.get('mtr_doesNotExist'),
    undefined,
    'a miss is remembered briefly, so a flood of unknown ids costs one read per id per second',
  );
});
