import t from 'tap';
import { completeClaimsReplica, type OwnershipBefore } from '../../services/domain/usage/identity-store.js';
import { RecentIds } from '../../services/domain/usage/recent-ids.js';

/**
 * Which replica a claimer may look an account's claims up on without syncing it first (claim-lock.ts): only one its
 * last claimer left complete. A wrong "yes" would let a retry with a new timestamp count twice on a cluster.
 */
t.test('the replica named by the owner that wrote it is complete; anything else means sync first', async (t) => {
  const rows = (entries: [string, OwnershipBefore][]) => new Map(entries);
  t.equal(completeClaimsReplica(['acc_1'], rows([['acc_1', { owner: 'p1', claimsAt: 'p1 r2' }]])), 'r2');
  t.equal(completeClaimsReplica(['acc_1'], rows([])), null, 'no row: never claimed by a process that says where');
  t.equal(
    completeClaimsReplica(['acc_1'], rows([['acc_1', { owner: 'p1', claimsAt: null }]])),
    null,
    'a row without a replica (written by an older consumer)',
  );
  t.equal(
    completeClaimsReplica(['acc_1'], rows([['acc_1', { owner: 'old-7', claimsAt: 'p1 r2' }]])),
    null,
    'an older consumer took the account over after p1 wrote it: its claims may be anywhere',
  );
  t.equal(
    completeClaimsReplica(['acc_1'], rows([['acc_1', { owner: 'p1', claimsAt: 'p10 r2' }]])),
    null,
    'an owner name that only starts like another',
  );
  t.equal(
    completeClaimsReplica(
      ['acc_1', 'acc_2'],
      rows([
        ['acc_1', { owner: 'p1', claimsAt: 'p1 r2' }],
        ['acc_2', { owner: 'p3', claimsAt: 'p3 r2' }],
      ]),
    ),
    'r2',
    'two accounts complete on the same replica',
  );
  t.equal(
    completeClaimsReplica(
      ['acc_1', 'acc_2'],
      rows([
        ['acc_1', { owner: 'p1', claimsAt: 'p1 r2' }],
        ['acc_2', { owner: 'p3', claimsAt: 'p3 r1' }],
      ]),
    ),
    null,
    'two accounts complete on different replicas',
  );
  t.equal(
    completeClaimsReplica(['acc_1', 'acc_2'], rows([['acc_1', { owner: 'p1', claimsAt: 'p1 r2' }]])),
    null,
    'one of two accounts never claimed',
  );
});

t.test('processes taking turns on an account: no reload of its window until the turns stop', async (t) => {
  const ids = new RecentIds(86_400_000);
  t.equal(ids.contended('acc_1', true), false, 'taken over once (a restart, a new process): reload');
  t.equal(ids.contended('acc_1', true), true, 'taken over again at the next claim: turns');
  t.equal(ids.contended('acc_1', true), true);
  t.equal(ids.contended('acc_1', false), false, 'this process claimed last: the turns stopped');
  t.equal(ids.contended('acc_1', true), false, 'one take-over after a quiet claim: reload');
  t.equal(ids.contended('acc_2', true), false, 'per account');
});
