import t from 'tap';
import { spawn } from 'node:child_process';
import { repoPath } from '../../shared/paths.js';
import { basicAuth, postForm, startOAuthServer } from '../fixtures/oauth.js';

interface CliResult {
  code: number;
  json: any;
  /** The first JSON line on stderr (the error), and every line. */
  stderr: any;
  stderrLines: any[];
  stdout: string;
}

/** `meterline accounts|clients|tokens …` against a test world, as an operator would run them. */
t.test('meterline accounts / clients / tokens', async (t) => {
  const { base, config, infra } = await startOAuthServer(t);
  const env = {
    ...process.env,
    DATABASE_URL: config.DATABASE_URL,
    NATS_URL: config.NATS_URL,
    NATS_NAMESPACE: config.NATS_NAMESPACE,
    CLICKHOUSE_URL: config.CLICKHOUSE_URL,
    PUBLIC_BASE_URL: base,
    SECRET_KEY: config.SECRET_KEY.toString('hex'),
  };
  const cliWith = (extraEnv: Record<string, string | undefined>, ...args: string[]) =>
    new Promise<CliResult>((resolve, reject) => {
      const child = spawn(process.execPath, [repoPath('bin/meterline.js'), ...args], {
        env: Object.fromEntries(Object.entries({ ...env, ...extraEnv }).filter(([, v]) => v !== undefined)),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      child.on('error', reject);
      child.on('exit', (code) => {
        const json = (text: string) => {
          try {
            return JSON.parse(text);
          } catch {
            return null;
          }
        };
        const lines = err.split('\n').filter(Boolean).map(json);
        resolve({ code: code ?? 1, json: json(out), stdout: out, stderr: lines[0] ?? null, stderrLines: lines });
      });
    });
  const cli = (...args: string[]) => cliWith({}, ...args);
  const email = `cli.${process.pid}.${Date.now()}@example.com`;
  const opEmail = `op.${email}`;

  const account = await cli(
    'accounts',
    'create',
    '--name',
    'Acme Corp',
    '--email',
    email,
    '--password',
    'hunter2hunter2',
  );
  t.equal(account.code, 0, JSON.stringify(account.stderr));
  t.same(Object.keys(account.json).sort(), ['account_id', 'customer_id', 'user_id']);
  t.match(account.json, { account_id: /^acct_/, customer_id: /^cus_/, user_id: /^usr_/ });
  const stored = (
    await infra.pg.query('SELECT password_hash, is_operator FROM users WHERE id = $1', [account.json.user_id])
  ).rows[0];
  t.match(stored.password_hash, /^scrypt\$/);
  t.notMatch(stored.password_hash, /hunter2/);
  t.equal(stored.is_operator, false);
  const operator = await cli(
    'accounts',
    'create',
    '--name',
    'Ops',
    '--email',
    opEmail,
    '--password',
    'hunter2hunter2',
    '--operator',
  );
  t.equal(operator.code, 0);

  t.test('account errors', async (t) => {
    const [dup, bad, usage] = await Promise.all([
      cli('accounts', 'create', '--name', 'Again', '--email', email.toUpperCase(), '--password', 'hunter2hunter2'),
      cli('accounts', 'create', '--name', 'X', '--email', 'not-an-email', '--password', 'short'),
      cli('accounts', 'create', '--name', 'X', '--email', 'x@example.com'),
    ]);
    t.equal(dup.code, 1);
    t.match(dup.stderr, { error: /already exists/, code: 'email_taken' });
    t.equal(bad.code, 1);
    t.match(bad.stderr, { code: 'validation_failed', errors: [{ field: 'email' }, { field: 'password' }] });
    t.equal(usage.code, 2);
    t.match(usage.stderr, { error: '--password is required' });
  });

  t.test('usage errors name every missing flag at once', async (t) => {
    const [two, all, client] = await Promise.all([
      cli('accounts', 'create', '--name', 'X'),
      cli('tokens', 'issue'),
      cli('clients', 'create'),
    ]);
    t.equal(two.code, 2);
    t.match(two.stderr, {
      error: '--email and --password are required',
      missing: ['--email', '--password'],
      usage: 'meterline accounts create --name N --email E --password P [--operator]',
      help: 'meterline accounts --help',
    });
    t.match(all.stderr, { error: '--email and --client-id are required' });
    t.match(client.stderr, { error: '--name and --redirect-uri are required' });
  });

  const confidential = await cli(
    'clients',
    'create',
    '--name',
    'Reports',
    '--redirect-uri',
    'https://reports.example.com/cb',
    '--redirect-uri',
    'http://localhost:3000/cb',
  );
  t.equal(confidential.code, 0, JSON.stringify(confidential.stderr));
  t.same(Object.keys(confidential.json).sort(), ['client_id', 'client_secret']);
  t.match(confidential.json, { client_id: /^cli_/, client_secret: /^[A-Za-z0-9_-]{43}$/ });
  const row = (
    await infra.pg.query('SELECT secret_hash, redirect_uris, is_public FROM oauth_clients WHERE id = $1', [
      confidential.json.client_id,
    ])
  ).rows[0];
  t.match(row, { is_public: false, redirect_uris: ['https://reports.example.com/cb', 'http://localhost:3000/cb'] });
  t.match(row.secret_hash, /^sha256\$/);
  t.notOk(row.secret_hash.includes(confidential.json.client_secret), 'only a hash of the secret is stored');

  t.test('client errors and public clients', async (t) => {
    const [pub, insecure, native, none] = await Promise.all([
      cli('clients', 'create', '--name', 'CLI tool', '--redirect-uri', 'http://127.0.0.1:9999/cb', '--public'),
      cli(
        'clients',
        'create',
        '--name',
        'Bad',
        '--redirect-uri',
        'http://example.com/cb',
        '--redirect-uri',
        'https://x.example.com/cb#f',
      ),
      cli('clients', 'create', '--name', 'Native', '--redirect-uri', 'com.example.app:/oauth', '--public'),
      cli('clients', 'create', '--name', 'None'),
    ]);
    t.equal(pub.code, 0);
    t.same(pub.json, { client_id: pub.json.client_id, client_secret: null });
    t.equal(insecure.code, 1);
    t.match(insecure.stderr, {
      code: 'validation_failed',
      errors: [
        { field: 'redirect_uri', message: /http is only allowed for loopback hosts/ },
        { field: 'redirect_uri', message: /must not contain a fragment/ },
      ],
    });
    t.equal(native.code, 0, 'private-use scheme for native apps');
    t.equal(none.code, 2);
    t.match(none.stderr, { error: /--redirect-uri is required/ });
  });

  t.test('tokens issue: a token response that works at the API and the token endpoint', async (t) => {
    const issued = await cli(
      'tokens',
      'issue',
      '--email',
      email,
      '--client-id',
      confidential.json.client_id,
      '--scope',
      'read write admin',
    );
    t.equal(issued.code, 0, JSON.stringify(issued.stderr));
    t.same(Object.keys(issued.json).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    t.match(
      issued.json,
      { token_type: 'Bearer', expires_in: 3600, scope: 'read write' },
      'admin left out for a non-operator',
    );
    t.same(issued.stderrLines.length, 1, 'and said so on stderr');
    t.match(issued.stderr, {
      warning: new RegExp(`^scope admin withheld: ${email.replace(/\./g, '\\.')} is not an operator`),
      requested: 'read write admin',
      granted: 'read write',
      withheld: 'admin',
    });
    const probe = await fetch(`${base}/v1/oauth-probe/write`, {
      headers: { authorization: `Bearer ${issued.json.access_token}` },
    });
    t.equal(probe.status, 200);
    t.match(await probe.json(), {
      accountId: account.json.account_id,
      userId: account.json.user_id,
      clientId: confidential.json.client_id,
    });
    const refreshed = await postForm(
      `${base}/oauth/token`,
      { grant_type: 'refresh_token', refresh_token: issued.json.refresh_token },
      { authorization: basicAuth(confidential.json.client_id, confidential.json.client_secret) },
    );
    t.equal(refreshed.status, 200);

    const op = await cli(
      'tokens',
      'issue',
      '--email',
      opEmail,
      '--client-id',
      confidential.json.client_id,
      '--scope',
      'admin',
    );
    t.equal(op.json.scope, 'admin');
    t.same(op.stderrLines, [], 'nothing withheld, nothing said');
    t.equal(
      (await fetch(`${base}/v1/oauth-probe/admin`, { headers: { authorization: `Bearer ${op.json.access_token}` } }))
        .status,
      200,
    );

    const [unknownUser, badScope] = await Promise.all([
      cli(
        'tokens',
        'issue',
        '--email',
        'nobody@example.com',
        '--client-id',
        confidential.json.client_id,
        '--scope',
        'read',
      ),
      cli('tokens', 'issue', '--email', email, '--client-id', confidential.json.client_id, '--scope', 'root'),
    ]);
    t.equal(unknownUser.code, 1);
    t.match(unknownUser.stderr, { code: 'not_found' });
    t.equal(badScope.code, 2);
    t.match(badScope.stderr, { error: /unknown scope "root"/ });
  });

  t.test('a token signed for another base URL: the API names both issuers', async (t) => {
    // The default issuer (http://127.0.0.1:8080) while the api runs elsewhere, with no `meterline up` to ask.
    const stray = await cliWith(
      { PUBLIC_BASE_URL: undefined, PORT: undefined },
      'tokens',
      'issue',
      '--email',
      email,
      '--client-id',
      confidential.json.client_id,
      '--scope',
      'read',
    );
    t.equal(stray.code, 0);
    t.match(stray.stderr, {
      warning: /^no running api found for this database .* using http:\/\/127\.0\.0\.1:8080 — set PUBLIC_BASE_URL/,
    });
    const res = await fetch(`${base}/v1/oauth-probe/read`, {
      headers: { authorization: `Bearer ${stray.json.access_token}` },
    });
    t.equal(res.status, 401);
    t.equal(res.headers.get('content-type'), 'application/problem+json');
    t.match(
      res.headers.get('www-authenticate'),
      /error="invalid_token", error_description="The access token was issued/,
    );
    t.match(await res.json(), {
      status: 401,
      code: 'unauthorized',
      detail: `The access token was issued for another server: issuer http://127.0.0.1:8080 is not this server's (${base}).`,
    });
  });
});

/** Help is text for people; commands still answer JSON. */
t.test('meterline --help and <command> --help', async (t) => {
  const run = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [repoPath('bin/meterline.js'), ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('error', reject);
      child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  const [main, short, tokens, billing, helpAccounts, nothing, unknown] = await Promise.all([
    run('--help'),
    run('-h'),
    run('tokens', '--help'),
    run('billing', 'run', '--help'),
    run('help', 'accounts'),
    run(),
    run('bogus'),
  ]);
  t.equal(main.code, 0);
  t.match(
    main.stdout,
    /^meterline — usage metering and billing\n\nUsage: meterline <command> \[options\]\n\nCommands:\n/,
  );
  for (const command of ['up', 'stack', 'migrate', 'accounts', 'clients', 'tokens', 'billing'])
    t.match(main.stdout, new RegExp(`\n  ${command} +\\S`), `lists ${command}`);
  t.throws(() => JSON.parse(main.stdout), 'help is text, not JSON');
  t.equal(short.stdout, main.stdout, '-h is --help');
  t.equal(tokens.code, 0);
  t.match(tokens.stdout, /Usage:\n {2}meterline tokens issue --email E --client-id C \[--scope "read write"\]/);
  t.match(tokens.stdout, /\n {2}--client-id C +an OAuth client/);
  t.match(billing.stdout, /meterline billing run \[--now ISO\][\s\S]*BILLING_GRACE_SECONDS/, 'help wins over running');
  t.match(helpAccounts.stdout, /meterline accounts limits --account ID/);
  t.equal(nothing.code, 2, 'no command: usage error');
  t.equal(nothing.stderr, main.stdout, 'with the help on stderr');
  t.equal(unknown.code, 2);
  t.match(JSON.parse(unknown.stderr), { error: 'unknown command "bogus"', help: 'meterline --help' });
});
