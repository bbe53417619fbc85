import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createInterface } from 'node:readline';
import { repoPath } from '../../shared/paths.js';
import { isolatedConfig, freePort, waitUntil } from '../fixtures/env.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// `meterline up` against the run's servers (given by URL, so it launches none): every role as its own
// process, a crashed role restarted, SIGINT stops them all.
t.test('meterline up: roles, readiness, crash restart, clean SIGINT', async (t) => {
  const config = await isolatedConfig(t);
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: config.DATABASE_URL,
    NATS_URL: config.NATS_URL,
    CLICKHOUSE_URL: config.CLICKHOUSE_URL,
    CLICKHOUSE_DATABASE: config.CLICKHOUSE_DATABASE,
    NATS_NAMESPACE: config.NATS_NAMESPACE,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    // JetStream reserves a stream's byte cap up front: keep this run's USAGE stream small on the shared server.
    USAGE_STREAM_MAX_BYTES: String(64 * 1024 * 1024),
  };
  const child = spawn(process.execPath, [repoPath('bin/meterline.js'), 'up'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  const stderrLines: string[] = [];
  child.stdout.on('data', (d) => (stdout += d));
  createInterface({ input: child.stderr }).on('line', (l) => stderrLines.push(l));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  await waitUntil(
    () => {
      try {
        JSON.parse(stdout);
        return true;
      } catch {
        return child.exitCode !== null;
      }
    },
    'meterline up to print its JSON',
    60_000,
  );
  const started = JSON.parse(stdout);
  t.equal(started.base_url, `http://127.0.0.1:${port}`);
  t.same(Object.keys(started.roles).sort(), ['api', 'billing', 'consumer', 'dispatcher']);
  const pids = Object.values(started.roles as Record<string, { pid: number }>).map((r) => r.pid);
  t.ok(pids.every(alive), 'every role runs as its own process');
  t.equal(new Set(pids).size, 4);

  const ready = await fetch(`${started.base_url}/readyz`);
  t.equal(ready.status, 200);

  // First run: the console's URL, and (no account yet) the one command that makes one — which works.
  t.equal(started.console_url, `${started.base_url}/console`);
  await waitUntil(
    () => stderrLines.some((l) => l.trim() === 'npx meterline accounts create --demo'),
    'the first-run hint',
  );
  t.ok(stderrLines.includes(`console: ${started.base_url}/console`));
  const demo = JSON.parse(
    (
      await promisify(execFile)(process.execPath, [repoPath('bin/meterline.js'), 'accounts', 'create', '--demo'], {
        env,
      })
    ).stdout,
  );
  t.match(demo, {
    meter_id: /^mtr_/,
    subscription_id: /^sub_/,
    payment_method_id: /^pm_/,
    usage_records: 72,
    operator: true,
    console_url: `${started.base_url}/console`,
    email: /@example\.com$/,
  });

  // Another terminal without PUBLIC_BASE_URL or PORT: the CLI signs for the api `up` runs (its base URL is
  // recorded under .data/), so the token works there; a PUBLIC_BASE_URL that disagrees is warned about.
  const cli = async (extra: Record<string, string | undefined>, ...args: string[]) => {
    const childEnv = Object.fromEntries(Object.entries({ ...env, ...extra }).filter(([, v]) => v !== undefined));
    const r = await promisify(execFile)(process.execPath, [repoPath('bin/meterline.js'), ...args], {
      env: childEnv as NodeJS.ProcessEnv,
    });
    return { json: JSON.parse(r.stdout), stderr: r.stderr };
  };
  const app = await cli({}, 'clients', 'create', '--name', 'up test', '--redirect-uri', 'http://127.0.0.1:9/cb');
  const issue = (extra: Record<string, string | undefined>) =>
    cli(extra, 'tokens', 'issue', '--email', demo.email, '--client-id', app.json.client_id, '--scope', 'read');
  const found = await issue({ PORT: undefined, PUBLIC_BASE_URL: undefined });
  t.equal(found.stderr, '', 'no warning: the running api was found');
  const meters = await fetch(`${started.base_url}/v1/meters`, {
    headers: { authorization: `Bearer ${found.json.access_token}` },
  });
  t.equal(meters.status, 200, 'the token is accepted by the running api');
  const elsewhere = 'http://127.0.0.1:9';
  const mismatched = await issue({ PUBLIC_BASE_URL: elsewhere });
  t.match(JSON.parse(mismatched.stderr), {
    warning: `PUBLIC_BASE_URL (${elsewhere}) is not the base URL of the running api (${started.base_url}): tokens signed for ${elsewhere} are refused there`,
    running_api: started.base_url,
  });
  const refused = await fetch(`${started.base_url}/v1/meters`, {
    headers: { authorization: `Bearer ${mismatched.json.access_token}` },
  });
  t.equal(refused.status, 401);
  t.match((await refused.json()).detail, `issuer ${elsewhere} is not this server's (${started.base_url})`);

  const consumerPid = started.roles.consumer.pid as number;
  process.kill(consumerPid, 'SIGKILL');
  await waitUntil(
    () => stderrLines.some((l) => l.includes('"role consumer restarted"')),
    'the consumer to be restarted',
    // A new Node process starting and connecting to every server: seconds when idle, far more on a loaded CI machine.
    120_000,
  );
  t.ok(
    stderrLines.some((l) => /role consumer exited unexpectedly/.test(l)),
    'the crash is reported',
  );
  const restarted = JSON.parse(stderrLines.find((l) => l.includes('"role consumer restarted"'))!);
  t.not(restarted.pid, consumerPid);
  t.ok(alive(restarted.pid));

  child.kill('SIGINT');
  t.equal(await exited, 0, 'exits 0 after SIGINT');
  for (const pid of [...pids.filter((p) => p !== consumerPid), restarted.pid])
    t.notOk(alive(pid), `role process ${pid} is gone`);
});
