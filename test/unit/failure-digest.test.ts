import t from 'tap';
import { FailureDigest } from '../failure-digest.js';

// A TAP stream as tap 21 prints it: a failed assertion two levels deep, its parents restating it, a thrown error.
const STREAM = `TAP version 14
# Subtest: dist/test/a.test.js
    # Subtest: outer
        # Subtest: inner
            not ok 1 - one is two
              ---
              compare: ===
              diff: |
                -2
                +1
              ...
            
            ok 2 - should be equal
            1..2
        not ok 1 - inner # time=39.324ms
          ---
          at:
            lineNumber: 3
          ...
        
        1..1
    not ok 1 - outer # time=50.337ms
      ---
      at:
        lineNumber: 2
      ...
    
    # Subtest: throws
        not ok 1 - boom
          ---
          tapCaught: returnedPromiseRejection
          ...
        
        1..1
    not ok 2 - throws # time=1ms
    1..2
not ok 1 - dist/test/a.test.js # time=100ms
# Subtest: dist/test/b.test.js
    ok 1 - fine
    1..1
ok 2 - dist/test/b.test.js
`;

t.test('keeps the innermost failures with their diagnostics, in chunks split anywhere', async (t) => {
  for (const size of [1, 7, 64, STREAM.length]) {
    const digest = new FailureDigest();
    for (let i = 0; i < STREAM.length; i += size) digest.push(STREAM.slice(i, i + size));
    t.same(
      digest.failures.map((f) => ({ file: f.file, path: f.path })),
      [
        { file: 'dist/test/a.test.js', path: ['outer', 'inner', 'one is two'] },
        { file: 'dist/test/a.test.js', path: ['throws', 'boom'] },
      ],
      `chunks of ${size}`,
    );
    t.same(digest.failures[0].diagnostics, ['compare: ===', 'diff: |', '  -2', '  +1']);
    t.match(
      digest.report(),
      /2 failure\(s\):\n\n✗ dist\/test\/a\.test\.js › outer › inner › one is two\n {4}compare: ===/,
    );
  }
});

t.test('a green stream reports nothing', async (t) => {
  const digest = new FailureDigest();
  digest.push('# Subtest: dist/test/b.test.js\n    ok 1 - fine\n    1..1\nok 1 - dist/test/b.test.js\n');
  t.equal(digest.report(), '');
});

t.test('a file that dies without a failed assertion is still named', async (t) => {
  const digest = new FailureDigest();
  digest.push(
    '# Subtest: dist/test/c.test.js\n    ok 1 - fine\nnot ok 1 - dist/test/c.test.js # time=5ms\n  ---\n  exitCode: 1\n  ...\n',
  );
  t.same(
    digest.failures.map((f) => [f.file, f.path, f.diagnostics]),
    [['dist/test/c.test.js', ['dist/test/c.test.js'], ['exitCode: 1']]],
  );
});
