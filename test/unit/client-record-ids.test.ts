import t from 'tap';
import { newClientRecordId } from '../../shared/client/emitter.js';

// The emitter's record ids are what makes a retried batch count once: they must never repeat, and keep
// their documented shape, across the pools they are cut from (2,048 ids each).
t.test('record ids: `cli_` + 22 base64url characters, unique across pools', async (t) => {
  const ids = Array.from({ length: 10_000 }, newClientRecordId);
  t.equal(new Set(ids).size, ids.length, 'no id repeats');
  t.ok(
    ids.every((id) => /^cli_[A-Za-z0-9_-]{22}$/.test(id)),
    'every id has the shape',
  );
  // Random, not a counter: the characters at each position spread over the alphabet.
  const firstChars = new Set(ids.map((id) => id[4]));
  t.ok(firstChars.size > 50, `the first random character takes ${firstChars.size} of 64 values`);
});
