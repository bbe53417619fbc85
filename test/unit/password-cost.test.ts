import t from 'tap';
import { parseConfig } from '../../shared/config.js';
import { hashPassword, passwordCost, setPasswordCost, verifyPassword } from '../../shared/auth/password.js';

// Production hashes at OWASP's scrypt N = 2^17; only the test suite's own processes lower it (test/run.ts).
t.test('new password hashes cost scrypt N = 2^17 by default', async (t) => {
  const config = parseConfig({
    DATABASE_URL: 'postgres://x/y',
    NATS_URL: 'nats://x',
    CLICKHOUSE_URL: 'http://x',
    SECRET_KEY: '11'.repeat(32),
  });
  t.equal(config.PASSWORD_SCRYPT_LOG2_N, 17);
  const before = passwordCost();
  t.teardown(() => setPasswordCost(Math.log2(before)));
  setPasswordCost(config.PASSWORD_SCRYPT_LOG2_N);
  const stored = await hashPassword('correct horse battery staple');
  t.match(stored, /^scrypt\$131072\$8\$1\$/);
  t.equal(await verifyPassword('correct horse battery staple', stored), true);
  // A hash made at an older, lower cost still verifies, and still refuses a wrong password: the parameters
  // travel with it. (Done at 2^14: each hash or check at 2^17 costs ~0.3 s of CPU, more on a loaded machine.)
  setPasswordCost(14);
  const old = await hashPassword('older');
  setPasswordCost(17);
  t.equal(await verifyPassword('older', old), true);
  t.equal(await verifyPassword('wrong', old), false);
});

t.test('the cost is validated', async (t) => {
  t.throws(
    () =>
      parseConfig({
        DATABASE_URL: 'postgres://x/y',
        NATS_URL: 'nats://x',
        CLICKHOUSE_URL: 'http://x',
        SECRET_KEY: '11'.repeat(32),
        PASSWORD_SCRYPT_LOG2_N: '40',
      }),
    /PASSWORD_SCRYPT_LOG2_N/,
  );
});
