import t from 'tap';
import { HotReadChecker } from '../../bench/phases/hot-read-check.js';

/**
 * The `hot-read` bench phase's judge (bench/phases/hot-read-check.ts): the phase fails when a read of the hot
 * meter goes backwards, counts more than was sent, or ends anywhere but on the records accepted.
 */
const a = (count: number, value = count * 5) => ({ count, value });

t.test('answers that only grow, within what was sent, ending on the records stored: no violation', async (t) => {
  const c = new HotReadChecker('hour');
  c.during(a(0), a(0));
  c.during(a(0), a(1000));
  c.during(a(800), a(2000));
  c.during(a(800), a(2000)); // an unchanged answer is monotone
  c.during(a(2000), a(2000)); // equal to what was sent
  c.final(a(3000), { stored: a(3000), accepted: a(3000), sent: a(3000) });
  t.ok(c.ok);
  t.equal(c.reads, 5);
  t.same(c.violations, []);
});

t.test('a count that goes back is caught', async (t) => {
  const c = new HotReadChecker('hour');
  c.during(a(1000), a(2000));
  c.during(a(999), a(3000));
  t.notOk(c.ok);
  t.equal(c.wrong, 1);
  t.match(c.violations[0], /hour read 2: 999 records .* below the previous answer 1000 records/);
});

t.test('a value that goes back while the count holds is caught', async (t) => {
  const c = new HotReadChecker('day');
  c.during({ count: 100, value: 550 }, a(200));
  c.during({ count: 100, value: 549 }, a(200));
  t.notOk(c.ok);
  t.match(c.violations[0], /day read 2: .* below the previous answer/);
});

t.test('an answer above what was sent (a record counted twice) is caught, by count or by value', async (t) => {
  const byCount = new HotReadChecker('hour');
  byCount.during(a(1001), a(1000));
  t.notOk(byCount.ok);
  t.match(byCount.violations[0], /above what was sent so far 1000 records/);
  const byValue = new HotReadChecker('hour');
  byValue.during({ count: 1000, value: 5001 }, a(1000));
  t.notOk(byValue.ok);
  t.equal(byValue.wrong, 1);
});

t.test('the final answer must be the records stored, neither fewer nor more', async (t) => {
  const exact = { stored: a(1000), accepted: a(1000), sent: a(1000) };
  const short = new HotReadChecker('day');
  short.during(a(500), a(1000));
  short.final(a(999), exact);
  t.notOk(short.ok);
  t.match(short.violations[0], /final answer 999 records .* is not the records stored 1000 records/);
  const over = new HotReadChecker('day');
  over.final(a(1001), exact);
  t.notOk(over.ok);
  const value = new HotReadChecker('day');
  value.final({ count: 1000, value: 5001 }, exact);
  t.notOk(value.ok, 'the value too');
  const back = new HotReadChecker('hour');
  back.during(a(900), a(1000));
  back.final(a(800), { stored: a(800), accepted: a(800), sent: a(1000) });
  t.notOk(back.ok, 'below an answer given during the load');
  t.match(back.violations[0], /below an answer during the load/);
});

t.test('the records stored hold every accepted one and nothing beyond what was sent', async (t) => {
  const refused = new HotReadChecker('day');
  // A refused request whose publish outcome stayed unknown may count: stored between accepted and sent.
  refused.final(a(1500), { stored: a(1500), accepted: a(1000), sent: a(2000) });
  t.ok(refused.ok, 'a 503 of unknown outcome that counted is no error');
  const lost = new HotReadChecker('day');
  lost.final(a(999), { stored: a(999), accepted: a(1000), sent: a(2000) });
  t.notOk(lost.ok);
  t.match(lost.violations[0], /accepted records missing, 999 records .* stored of 1000 records/);
  const invented = new HotReadChecker('day');
  invented.final(a(2001), { stored: a(2001), accepted: a(1000), sent: a(2000) });
  t.notOk(invented.ok);
  t.match(invented.violations[0], /more stored than sent/);
});

t.test('every wrong answer is counted, the first twenty kept word for word', async (t) => {
  const c = new HotReadChecker('hour');
  for (let i = 0; i < 30; i++) c.during(a(2000), a(1000));
  t.equal(c.wrong, 30);
  t.equal(c.violations.length, 20);
});
