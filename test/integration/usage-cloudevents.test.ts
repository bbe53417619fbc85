import t from 'tap';
import { CloudEvent, CONSTANTS, HTTP } from 'cloudevents';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApi } from '../fixtures/api.js';
import { iso, postJson, startConsumer, storedCount } from './ingest-helpers.js';

const MINUTE = 60_000;

t.test(
  'CloudEvents structured mode: the cloudevents SDK as emitter, counted once across resends, same answers as native records',
  async (t) => {
    const config = await isolatedConfig(t);
    const api = await startApi(t, config);
    await startConsumer(t, config, { maxWaitMs: 100 });
    const { infra } = api;
    const acct = await createTestAccount(infra);
    const W = acct.auth.write.authorization;
    const meter = (
      await postJson(api.url, '/v1/meters', W, {
        name: 'llm-tokens',
        unit: 'tokens',
        aggregation: 'sum',
        dimensions: ['model'],
      })
    ).body as { id: string };
    const send = async (contentType: string, body: string) => {
      const res = await fetch(`${api.url}/v1/usage`, {
        method: 'POST',
        headers: { authorization: W, 'content-type': contentType },
        body,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const sendBatch = (events: CloudEvent<unknown>[]) =>
      send(CONSTANTS.MIME_CE_BATCH, JSON.stringify(events.map((e) => e.toJSON())));
    const sendOne = (event: CloudEvent<unknown>) => {
      const message = HTTP.structured(event);
      return send(String(message.headers['content-type']), String(message.body));
    };

    const now = Date.now();
    const models = ['gpt-x', 'gpt-y', 'gpt-z'];
    const events = Array.from(
      { length: 300 },
      (_, i) =>
        new CloudEvent({
          specversion: '1.0',
          // Half name the meter by name, half by id.
          type: i % 2 ? 'llm-tokens' : meter.id,
          source: `urn:svc:${i % 3}`,
          id: `evt-${Math.floor(i / 3)}`, // ids repeat across sources: source + id is the identity
          time: iso(now - (i % 50) * MINUTE),
          datacontenttype: 'application/json',
          data: { value: i + 1, model: models[i % 3] },
        }),
    );

    const first = await sendBatch(events.slice(0, 200));
    t.equal(first.status, 202);
    t.equal(first.body.accepted, 200);
    t.match(first.body.results[0].id, /^ce_[A-Za-z0-9_-]{43}$/, 'record id derived from source + id');
    // Resends: a whole batch again, an overlapping batch, and single events in structured mode.
    t.equal((await sendBatch(events.slice(0, 200))).body.accepted, 200);
    t.equal((await sendBatch(events.slice(150, 300))).body.accepted, 150);
    for (const e of events.slice(290)) {
      const one = await sendOne(e);
      t.equal(one.status, 202);
      t.match(one.body, { id: /^ce_/, meter_id: meter.id, value: e.data && (e.data as { value: number }).value });
    }
    t.equal(
      first.body.results[0].id,
      (await sendBatch([events[0]!])).body.results[0].id,
      'a resent event gets the same record id',
    );

    await waitUntil(async () => (await storedCount(infra, meter.id)) === 300, 'the 300 events stored once each');
    const res = await fetch(
      `${api.url}/v1/meters/${meter.id}/usage?window=none&group_by=model&start_date=${iso(now - 86_400_000).slice(0, 10)}&end_date=${iso(now).slice(0, 10)}`,
      {
        headers: acct.auth.read,
      },
    );
    const usage = (await res.json()) as {
      value: number;
      count: number;
      groups: { dimensions: { model: string }; value: number; count: number }[];
    };
    t.equal(usage.count, 300, 'counted exactly once across resends');
    t.equal(usage.value, (300 * 301) / 2);
    for (const g of usage.groups) {
      const want = events
        .filter((e) => (e.data as { model: string }).model === g.dimensions.model)
        .reduce((s, e) => s + (e.data as { value: number }).value, 0);
      t.equal(g.value, want, `data.model became a dimension: ${g.dimensions.model}`);
    }

    t.test('bad events: precise problems naming the event fields', async (t) => {
      const good = {
        specversion: '1.0',
        type: meter.id,
        source: 'urn:x',
        id: 'bad-1',
        time: iso(now),
        data: { value: 1 },
      };
      const single = (e: object) => send(CONSTANTS.MIME_CE_JSON, JSON.stringify(e));
      const fieldsOf = (b: { errors?: { field: string }[] }) => (b.errors ?? []).map((e) => e.field).sort();
      t.same(fieldsOf((await single({ ...good, specversion: '0.3' })).body), ['specversion']);
      t.same(
        fieldsOf((await single({ ...good, time: undefined })).body),
        ['time'],
        'time is required (a resend must carry the same one)',
      );
      t.same(fieldsOf((await single({ ...good, data: { value: 'seven' } })).body), ['data.value']);
      t.same(
        fieldsOf((await single({ ...good, data: { value: -1 } })).body),
        ['data.value'],
        'counter ≥ 0, as for native records',
      );
      t.same(fieldsOf((await single({ ...good, data: { value: 1, tier: 3 } })).body), ['data.tier']);
      t.same(
        fieldsOf((await single({ ...good, data: { value: 1, colour: 'red' } })).body),
        ['data.colour'],
        'an undeclared dimension',
      );
      t.same(fieldsOf((await single({ ...good, time: 'yesterday' })).body), ['time']);
      t.equal((await single({ ...good, type: 'no-such-meter' })).status, 404);
      const batch = await send(
        CONSTANTS.MIME_CE_BATCH,
        JSON.stringify([good, { ...good, id: 'bad-2', data: { value: 'x' } }]),
      );
      t.equal(batch.status, 202);
      t.match(batch.body.results[1], { status: 'rejected', error: { errors: [{ field: 'data.value' }] } });
      const none = await send(
        CONSTANTS.MIME_CE_BATCH,
        JSON.stringify([
          { ...good, data: {} },
          { ...good, type: 'nope' },
        ]),
      );
      t.equal(none.status, 422);
      t.same(fieldsOf(none.body), ['[0].data.value', '[1].type']);
      await postJson(api.url, '/v1/meters', W, { name: 'llm-tokens', unit: 'tokens', aggregation: 'sum' });
      const ambiguous = await waitUntil(
        async () => (await single({ ...good, type: 'llm-tokens', id: 'amb' })).status === 422,
        'a second meter of that name to make the name ambiguous',
      );
      void ambiguous;
      t.same(fieldsOf((await single({ ...good, type: 'llm-tokens', id: 'amb' })).body), ['type']);
    });
  },
);
