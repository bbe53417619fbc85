import t from 'tap';
import { accountCaller, addressCaller, BodyBudget, overloaded } from '../../shared/http/body-budget.js';
import { BodyReads } from '../../shared/http/body-reads.js';

const MIB = 1024 * 1024;

t.test('a caller holds at most its share; the others still find room', async (t) => {
  const budget = new BodyBudget(8 * MIB, 2 * MIB);
  const noisy = accountCaller('acct_noisy');
  t.equal(budget.reserve(noisy, MIB), undefined);
  t.equal(budget.reserve(noisy, MIB), undefined);
  t.equal(budget.reserve(noisy, 1), 'caller', 'past its share: refused, whatever room is left');
  t.equal(budget.heldBy(noisy), 2 * MIB, 'a refusal takes nothing');
  t.equal(budget.reserve(accountCaller('acct_quiet'), 2 * MIB), undefined, 'another account fits');
  t.equal(budget.reserve(addressCaller('127.0.0.9'), 2 * MIB), undefined);
  t.equal(budget.reserve(addressCaller('127.0.0.10'), 2 * MIB), undefined);
  t.equal(budget.reserve(addressCaller('127.0.0.11'), 1), 'full', 'the process budget bounds them all');
  t.equal(budget.bytes, 8 * MIB);
  t.equal(budget.callers, 4);
});

t.test('release and transfer keep the counters exact; nothing is left behind', async (t) => {
  const budget = new BodyBudget(4 * MIB, 2 * MIB);
  const address = addressCaller('127.0.0.1');
  const account = accountCaller('acct_a');
  t.equal(budget.reserve(address, MIB), undefined);
  t.equal(budget.transfer(address, account, MIB), undefined, 'the token checked: the account carries it');
  t.equal(budget.heldBy(address), 0);
  t.equal(budget.heldBy(account), MIB);
  t.equal(budget.reserve(address, 2 * MIB), undefined);
  t.equal(budget.transfer(address, account, 2 * MIB), 'caller', 'the account has no room for it: refused');
  t.equal(budget.heldBy(address), 2 * MIB, 'a refused transfer moves nothing');
  budget.release(address, 2 * MIB);
  budget.release(account, MIB);
  t.equal(budget.bytes, 0);
  t.equal(budget.callers, 0, 'no caller kept with zero bytes');
});

t.test('the 503 says whose budget is spent', async (t) => {
  t.match(overloaded('caller').detail, /your share/);
  t.match(overloaded('full').detail, /too much at once/);
  t.equal(overloaded('caller').status, 503);
  t.equal(overloaded('caller').headers['Retry-After'], '1');
});

t.test('reads past the deadline are expired by the sweep, the others left alone', async (t) => {
  const failures: string[] = [];
  const reads = new BodyReads(1_000, (reason) => failures.push(reason));
  const expired: string[] = [];
  const read = (name: string, startedAt: number) => ({ startedAt, expire: () => expired.push(name) });
  const old = read('old', 0);
  const young = read('young', 900);
  reads.add(old);
  reads.add(young);
  reads.sweep(1_000);
  t.same(expired, ['old'], 'only the overdue one');
  reads.delete(old);
  reads.delete(young);
  t.equal(reads.count, 0);
  reads.failed('request_timeout');
  t.same(failures, ['request_timeout'], 'failures are reported by reason');
});
