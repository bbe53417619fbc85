import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { metricValue, StreamClient, type StreamAnswer } from '../fixtures/usage-stream.js';
import { openRevocationBucket, publishRevocations } from '../../shared/auth/revocations.js';
import { CLOSE_TOKEN_INVALID, MAX_QUEUED_BYTES, MAX_SEND_BUFFER_BYTES } from '../../services/ingress/usage-stream.js';
import {
  createMeter,
  iso,
  postJson,
  startConsumer,
  startUsageApi,
  storedCount,
  storedIds,
  waitForMeter,
} from './ingest-helpers.js';

/** What a refused handshake answered (status and problem body); fails if the socket opened. */
async function refusal(opening: Promise<StreamClient>): Promise<{ status?: number; body?: unknown }> {
  try {
    (await opening).close();
  } catch (err) {
    return err as { status?: number; body?: unknown };
  }
  throw new Error('the handshake was accepted');
}

// GET /v1/usage/stream (docs/design.md §8, Usage stream) against the real stack: handshake, the batch rules
// per frame, pipelined frames, a client that stops reading, and a token revoked mid-stream.
t.test('usage stream', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 50 });
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const other = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const counter = await createMeter(infra, acct.accountId);
  const gauge = await createMeter(infra, acct.accountId, { type: 'gauge', aggregation: 'last' });
  const inactive = await createMeter(infra, acct.accountId, { status: 'inactive' });
  const foreign = await createMeter(infra, other.accountId);
  await waitForMeter(api, counter, W);
  await waitForMeter(api, gauge, W);
  const ts = iso(Date.now() - 60_000);
  const sum = (answers: StreamAnswer[]) => answers.reduce((s, a) => s + (a.accepted ?? 0), 0);

  t.test('the handshake: write scope, and a plain GET is told to upgrade', async (t) => {
    t.match(
      await refusal(StreamClient.open(api.url)),
      { status: 401, body: { code: 'unauthorized' } },
      'no token: 401',
    );
    t.match(
      await refusal(StreamClient.open(api.url, acct.auth.read.authorization)),
      { status: 403, body: { code: 'insufficient_scope' } },
      'read token: 403',
    );
    const plain = await fetch(`${api.url}/v1/usage/stream`, { headers: { authorization: W } });
    t.equal(plain.status, 426);
    t.equal(((await plain.json()) as { code: string }).code, 'upgrade_required');
    t.equal(plain.headers.get('upgrade'), 'websocket');
  });

  t.test('each frame follows the batch rules of POST /v1/usage', async (t) => {
    const c = await StreamClient.open(api.url, W);
    t.teardown(() => c.close());
    const records = [
      { meter_id: counter.id, value: 1.5, timestamp: ts, id: 'f-ok-1' },
      { meter_id: counter.id, value: -1, timestamp: ts, id: 'f-negative' },
      { meter_id: gauge.id, value: -2, timestamp: ts, id: 'f-ok-2' },
      { meter_id: inactive.id, value: 1, timestamp: ts, id: 'f-inactive' },
      { meter_id: foreign.id, value: 1, timestamp: ts, id: 'f-foreign' },
      { meter_id: counter.id, value: 1, timestamp: 'yesterday', id: 'f-bad-ts' },
      { meter_id: counter.id, value: 1, timestamp: ts, extra: true },
      { meter_id: counter.id, value: 2, timestamp: ts, id: 'f-dims', dimensions: { model: 'gpt-x', region: 'eu' } },
      { meter_id: counter.id, value: 2, timestamp: ts, id: 'f-bad-dims', dimensions: { model: '' } },
    ];
    c.send({ seq: 1, records });
    c.send({ seq: 2, records: { meter_id: counter.id, value: 4, timestamp: ts, id: 'f-single' } });
    c.send({ seq: 3, records: [{ meter_id: inactive.id, value: 1, timestamp: ts }] });
    c.send('{"seq": 4, "records": [');
    c.send({ records: [] });
    c.send({ seq: 6, records: [] });
    c.send({
      seq: 7,
      records: Array.from({ length: 1001 }, () => ({ meter_id: counter.id, value: 1, timestamp: ts })),
    });
    c.send({ seq: 8, records: [], colour: 'red' });
    await c.waitForAnswers(8);

    // The same records as an HTTP batch (ids changed so the two don't collide): the same outcome per index.
    const http = await postJson(
      api.url,
      '/v1/usage',
      W,
      records.map((r) => ('id' in r ? { ...r, id: `http-${r.id}` } : r)),
    );
    const [one] = c.answersTo(1);
    t.equal(c.answersTo(1).length, 1, 'one answer per frame');
    t.equal(one!.accepted, 3);
    t.equal(one!.rejected, 6);
    const shape = (results: StreamAnswer['results']) =>
      results!.map((r) => ({
        index: r.index,
        status: r.status,
        code: r.error?.code,
        fields: r.error?.errors?.map((e) => e.field),
      }));
    t.same(shape(one!.results), shape(http.body.results), 'per-record outcomes match the HTTP batch');
    t.same(
      one!.results!.map((r) => r.status),
      ['accepted', 'rejected', 'accepted', 'rejected', 'rejected', 'rejected', 'rejected', 'accepted', 'rejected'],
    );
    t.match(
      one!.results![8]!.error,
      { errors: [{ field: /^dimensions/ }] },
      'dimensions follow the same rules as in a batch',
    );
    t.equal(one!.results![4]!.error!.code, 'not_found', "another account's meter does not exist");
    t.equal(one!.results![3]!.error!.code, 'meter_inactive');

    t.match(
      c.answersTo(2)[0],
      { seq: 2, accepted: 1, rejected: 0, results: [{ index: 0, status: 'accepted', id: 'f-single' }] },
      'one record is a batch of one',
    );
    t.match(
      c.answersTo(3)[0],
      { seq: 3, accepted: 0, rejected: 1, results: [{ status: 'rejected', error: { code: 'meter_inactive' } }] },
      'nothing valid: every record reported',
    );
    const unseq = c.answersTo(null);
    t.equal(unseq.length, 2);
    t.match(
      unseq.find((a) => a.error?.code === 'malformed_json'),
      { seq: null, error: { code: 'malformed_json' } },
      'malformed JSON',
    );
    t.match(
      unseq.find((a) => a.error?.code === 'validation_failed'),
      { error: { errors: [{ field: 'seq' }] } },
      'a frame without seq',
    );
    t.match(c.answersTo(6)[0], {
      error: { code: 'validation_failed', errors: [{ field: 'records', message: /at least 1/ }] },
    });
    t.match(c.answersTo(7)[0], {
      error: { code: 'validation_failed', errors: [{ field: 'records', message: /at most 1000/ }] },
    });
    t.match(c.answersTo(8)[0], { error: { code: 'validation_failed', errors: [{ field: 'colour' }] } });

    await waitUntil(async () => (await storedIds(infra, counter.id)).has('f-single'), 'the accepted records stored');
    const ids = await storedIds(infra, counter.id);
    t.ok(
      ids.has('f-ok-1') &&
        ids.has('f-dims') &&
        !ids.has('f-negative') &&
        !ids.has('f-bad-ts') &&
        !ids.has('f-bad-dims'),
      'accepted records stored, rejected ones not',
    );
    t.ok((await storedIds(infra, gauge.id)).has('f-ok-2'));
  });

  t.test('1,000 pipelined frames: every frame answered once, the stored count exact', async (t) => {
    const meter = await createMeter(infra, acct.accountId);
    await waitForMeter(api, meter, W);
    const c = await StreamClient.open(api.url, W);
    t.teardown(() => c.close());
    const frames = 1_000;
    for (let seq = 0; seq < frames; seq++) {
      c.send({
        seq,
        records: Array.from({ length: 5 }, (_, i) => ({
          meter_id: meter.id,
          value: 1,
          timestamp: ts,
          ...(i % 2 ? {} : { id: `p-${seq}-${i}` }),
        })),
      });
    }
    await c.waitForAnswers(frames, `${frames} answers`, 60_000);
    const seqs = c.answers.map((a) => a.seq);
    t.equal(new Set(seqs).size, frames, 'every seq answered exactly once');
    t.equal(
      c.answers.filter((a) => a.accepted === 5).length,
      frames,
      `every frame fully accepted (${JSON.stringify(c.answers.find((a) => a.accepted !== 5))})`,
    );
    await waitUntil(async () => (await storedCount(infra, meter.id)) >= frames * 5, 'every record stored', 60_000, 100);
    t.equal(await storedCount(infra, meter.id), frames * 5, 'stored == accepted, exactly');
  });

  t.test('a client that stops reading: the server stops taking its frames and holds a bounded amount', async (t) => {
    // Its own api on the same world, with a small in-flight limit.
    const maxInflight = 4;
    const small = await startUsageApi(t, { ...config, USAGE_STREAM_MAX_INFLIGHT: maxInflight });
    const meter = await createMeter(infra, acct.accountId);
    await waitForMeter(small, meter, W);
    const c = await StreamClient.open(small.url, W);
    t.teardown(() => c.close());
    c.ws.pause(); // reads nothing from now on
    // Large answers (1,000 results with 120-character ids each), so that unread answers fill the kernel's
    // buffers and then the server's own limit.
    const frames = 120;
    const pad = 'x'.repeat(110);
    for (let seq = 0; seq < frames; seq++) {
      c.send({
        seq,
        records: Array.from({ length: 1_000 }, (_, i) => ({
          meter_id: meter.id,
          value: 1,
          timestamp: ts,
          id: `${pad}-${seq}-${i}`,
        })),
      });
    }
    const frameCount = async (outcome: string) =>
      metricValue(small.infra, 'meterline_usage_stream_frames_total', { outcome });
    const received = async () =>
      (await frameCount('answered')) +
      (await frameCount('overflow')) +
      (await metricValue(small.infra, 'meterline_usage_stream_queued_frames')) +
      (await metricValue(small.infra, 'meterline_usage_stream_inflight_frames'));
    await waitUntil(async () => (await received()) === frames, 'the server to have received every frame', 60_000, 100);
    t.ok(
      (await metricValue(small.infra, 'meterline_usage_stream_queued_bytes')) <= MAX_QUEUED_BYTES,
      'frames wait, unparsed, in a bounded queue',
    );
    t.ok((await frameCount('overflow')) > 0, 'frames beyond the bound are refused (unavailable), not held');
    t.ok((await frameCount('answered')) < frames, 'the server stopped taking frames');
    t.ok(
      (await metricValue(small.infra, 'meterline_usage_stream_buffered_bytes')) <= MAX_SEND_BUFFER_BYTES,
      'unread answers stay under the cap',
    );
    t.equal(c.closed, undefined, 'the socket stays open');

    c.ws.resume();
    await c.waitForAnswers(frames, 'every answer once the client reads', 60_000);
    t.equal(new Set(c.answers.map((a) => a.seq)).size, frames, 'every frame answered exactly once');
    const refused = c.answers.filter((a) => a.error);
    t.ok(refused.length > 0 && refused.every((a) => a.error!.code === 'unavailable'), 'refused frames say unavailable');
    const accepted = sum(c.answers);
    t.equal(accepted, (frames - refused.length) * 1_000, 'every other frame fully accepted');
    await waitUntil(
      async () => (await storedCount(infra, meter.id)) >= accepted,
      'accepted records stored',
      60_000,
      100,
    );
    const stored = await storedIds(infra, meter.id);
    t.equal(stored.size, accepted, 'exactly the acknowledged records are stored');
    for (const a of refused) t.notOk(stored.has(`${pad}-${a.seq}-0`), `frame ${a.seq} (refused) not stored`);
  });

  t.test('a token revoked mid-stream closes the socket with 4001; only answered frames count', async (t) => {
    const meter = await createMeter(infra, acct.accountId);
    await waitForMeter(api, meter, W);
    const victim = await createTestAccount(infra); // its own token, revoked below
    const vMeter = await createMeter(infra, victim.accountId);
    await waitForMeter(api, vMeter, victim.auth.write.authorization);
    const c = await StreamClient.open(api.url, victim.auth.write.authorization);
    let seq = 0;
    const sendOne = () =>
      c.send({ seq: seq++, records: [{ meter_id: vMeter.id, value: 1, timestamp: ts, id: `r-${seq}` }] });
    for (let i = 0; i < 5; i++) sendOne();
    await c.waitForAnswers(5);
    const claims = JSON.parse(Buffer.from(victim.tokens.write.split('.')[1]!, 'base64url').toString()) as {
      jti: string;
      exp: number;
    };
    await publishRevocations(await openRevocationBucket(infra.nats, infra.natsNames.revocationBucket), [
      { jti: claims.jti, exp: claims.exp },
    ]);
    const sending = setInterval(() => c.closed === undefined && sendOne(), 20);
    t.teardown(() => clearInterval(sending));
    await waitUntil(() => c.closed !== undefined, 'the socket to close', 15_000);
    clearInterval(sending);
    t.equal(c.closed!.code, CLOSE_TOKEN_INVALID, 'closed with 4001');
    const accepted = sum(c.answers);
    t.ok(accepted >= 5 && accepted <= seq, 'the frames before the revocation were answered');
    t.ok(
      c.answers.every((x) => x.accepted === 1),
      'every answer an acceptance: no frame refused for the token',
    );
    await waitUntil(async () => (await storedCount(infra, vMeter.id)) >= accepted, 'answered records stored');
    t.equal(await storedCount(infra, vMeter.id), accepted, 'exactly the answered records are stored');
    t.match(
      await refusal(StreamClient.open(api.url, victim.auth.write.authorization)),
      { status: 401 },
      'the revoked token cannot reconnect',
    );
  });
});
